//! Bringing up the loopback interface of a new network namespace: one
//! `RTM_NEWLINK` request over a route netlink socket (what `ip link set lo
//! up` sends), built by hand because it is 32 bytes.

use std::os::fd::AsRawFd;

use nix::sys::socket::{
    AddressFamily, MsgFlags, NetlinkAddr, SockFlag, SockProtocol, SockType, recv, sendto, socket,
};

const RTM_NEWLINK: u16 = 16;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_ACK: u16 = 4;
const NLMSG_ERROR: u16 = 2;
const IFF_UP: u32 = 1;
/// The loopback interface is the first one of every network namespace.
const LOOPBACK_INDEX: i32 = 1;

pub(super) fn loopback_up() -> Result<(), String> {
    let fail =
        |what: &str, e: nix::Error| format!("bringing up the loopback interface: {what}: {e}");
    let fd = socket(
        AddressFamily::Netlink,
        SockType::Raw,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkRoute,
    )
    .map_err(|e| fail("socket", e))?;
    let mut msg = Vec::with_capacity(32);
    msg.extend_from_slice(&32u32.to_ne_bytes()); // nlmsg_len
    msg.extend_from_slice(&RTM_NEWLINK.to_ne_bytes());
    msg.extend_from_slice(&(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
    msg.extend_from_slice(&1u32.to_ne_bytes()); // seq
    msg.extend_from_slice(&0u32.to_ne_bytes()); // pid
    msg.extend_from_slice(&[0, 0]); // ifi_family (AF_UNSPEC), padding
    msg.extend_from_slice(&0u16.to_ne_bytes()); // ifi_type
    msg.extend_from_slice(&LOOPBACK_INDEX.to_ne_bytes());
    msg.extend_from_slice(&IFF_UP.to_ne_bytes()); // ifi_flags
    msg.extend_from_slice(&IFF_UP.to_ne_bytes()); // ifi_change
    sendto(
        fd.as_raw_fd(),
        &msg,
        &NetlinkAddr::new(0, 0),
        MsgFlags::empty(),
    )
    .map_err(|e| fail("send", e))?;
    let mut reply = [0u8; 512];
    let n = recv(fd.as_raw_fd(), &mut reply, MsgFlags::empty()).map_err(|e| fail("recv", e))?;
    // An acknowledgement is an NLMSG_ERROR message whose error is 0.
    let field = |at: usize, len: usize| reply.get(at..at + len).filter(|_| at + len <= n);
    let kind = field(4, 2).map(|b| u16::from_ne_bytes([b[0], b[1]]));
    let error = field(16, 4).map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
    match (kind, error) {
        (Some(NLMSG_ERROR), Some(0)) => Ok(()),
        (Some(NLMSG_ERROR), Some(e)) => Err(format!(
            "bringing up the loopback interface: {}",
            nix::Error::from_raw(-e)
        )),
        _ => Err("bringing up the loopback interface: unexpected netlink reply".into()),
    }
}
