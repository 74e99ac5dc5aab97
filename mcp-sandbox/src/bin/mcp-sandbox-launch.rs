//! `mcp-sandbox-launch`: the sandbox launcher as a program of its own, for
//! hosts that do not call `mcp_sandbox::hook()` in their `main`. Hosts run
//! it; it is not meant to be run by hand.

fn main() {
    mcp_sandbox::launcher_main()
}
