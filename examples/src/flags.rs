//! The benchmark binaries' command lines (`bench-client`, `scale-bench`):
//! `--flag value` pairs, every flag taking one value, each parsed with a
//! message naming the flag.

use std::str::FromStr;

/// One flag's value, as given on the command line.
#[derive(Debug)]
pub struct Value {
    flag: String,
    value: String,
}

impl Value {
    /// The value as given.
    pub fn text(self) -> String {
        self.value
    }

    /// The value as given, borrowed.
    pub fn as_str(&self) -> &str {
        &self.value
    }

    /// The value as a number (or anything else `FromStr`).
    pub fn number<T: FromStr>(&self) -> Result<T, String> {
        self.value
            .parse()
            .map_err(|_| format!("{}: {:?} is not a number", self.flag, self.value))
    }

    /// `--era legacy|modern`: whether the value asks for the modern
    /// (2026-07-28) revision.
    pub fn is_modern_era(&self) -> Result<bool, String> {
        match self.value.as_str() {
            "legacy" => Ok(false),
            "modern" => Ok(true),
            other => Err(format!(
                "{}: {other:?} is neither legacy nor modern",
                self.flag
            )),
        }
    }
}

/// Calls `set(flag, value)` for each `--flag value` pair of `args` (the
/// command line without the program name), in order. `set` returns an
/// error for a flag it does not know or a value it cannot use; a flag
/// without a value is an error too.
pub fn each_flag(
    args: impl IntoIterator<Item = String>,
    mut set: impl FnMut(&str, Value) -> Result<(), String>,
) -> Result<(), String> {
    let mut it = args.into_iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        set(
            &flag,
            Value {
                flag: flag.clone(),
                value,
            },
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<(u64, bool), String> {
        let (mut n, mut modern) = (0, false);
        each_flag(args.iter().map(|a| (*a).to_owned()), |flag, v| {
            match flag {
                "--n" => n = v.number()?,
                "--era" => modern = v.is_modern_era()?,
                other => return Err(format!("unknown flag {other}")),
            }
            Ok(())
        })?;
        Ok((n, modern))
    }

    #[test]
    fn pairs_are_parsed_in_order_with_messages_naming_the_flag() {
        assert_eq!(parse(&["--n", "3", "--era", "modern"]), Ok((3, true)));
        assert_eq!(
            parse(&["--n", "x"]),
            Err(r#"--n: "x" is not a number"#.into())
        );
        assert_eq!(
            parse(&["--era", "new"]),
            Err(r#"--era: "new" is neither legacy nor modern"#.into())
        );
        assert_eq!(parse(&["--n"]), Err("--n needs a value".into()));
        assert_eq!(parse(&["--x", "1"]), Err("unknown flag --x".into()));
    }
}
