//! Compact JSON for [`RawJson::from_value`](super::RawJson::from_value): the
//! bytes `serde_json::to_writer` writes, for the values requests carry
//! (structs, maps with string keys, sequences, strings, numbers), written
//! straight into the buffer.
//!
//! `serde_json` checks every byte of every string against its escape table
//! and writes it in pieces (about ten instructions a byte, the largest part
//! of encoding a request's params); here a string is checked for bytes that
//! need escaping (`"`, `\`, control characters) in one vectorized pass and,
//! as almost always, copied whole. Everything else keeps `serde_json`'s
//! exact output: numbers are formatted by `serde_json` itself, punctuation
//! is its compact formatter's.
//!
//! Anything outside that subset (a map key that is not a string, a number
//! type `serde_json` treats specially, any error, including one the value's
//! own `Serialize` reports) returns [`Unsupported`], and the caller encodes
//! the value again with `serde_json`, which also gives the precise error. A
//! property test compares both writers on generated values.

use std::fmt;

use serde::ser::{self, Impossible, Serialize};

use crate::jsonrpc::scan::{is_special, needs_escape};

/// `serde_json`'s name for its raw value struct: its one field is the
/// value's text, written verbatim.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// The value is outside what this writer handles (or failed): encode it
/// with `serde_json` instead.
#[derive(Debug)]
pub(crate) struct Unsupported;

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not handled by the compact writer")
    }
}

impl std::error::Error for Unsupported {}

impl ser::Error for Unsupported {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Unsupported
    }
}

/// Appends `value` as compact JSON to `out`. On `Err`, `out` holds a part
/// of it: the caller truncates it and uses `serde_json`.
pub(crate) fn write<T: Serialize + ?Sized>(
    value: &T,
    out: &mut Vec<u8>,
) -> Result<(), Unsupported> {
    value.serialize(&mut Writer { out })
}

struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

impl Writer<'_> {
    /// A number, formatted by `serde_json` (the same digits, `null` for a
    /// non-finite float).
    fn number<N: Serialize>(&mut self, n: N) -> Result<(), Unsupported> {
        serde_json::to_writer(&mut *self.out, &n).map_err(|_| Unsupported)
    }
}

/// `s` as a JSON string, escaped as `serde_json` escapes it.
#[inline]
pub(crate) fn write_str(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    if needs_escape(b) {
        write_escaped(out, b);
        return;
    }
    // Almost every string: checked in one vectorized pass, copied whole.
    // No `reserve` first: each push checks its room anyway, and on the hot
    // path the buffer is already sized for the whole value.
    out.push(b'"');
    out.extend_from_slice(b);
    out.push(b'"');
}

/// A key and its colon (`"key":`).
#[inline]
fn write_key(out: &mut Vec<u8>, key: &str) {
    let b = key.as_bytes();
    if needs_escape(b) {
        write_escaped(out, b);
        out.push(b':');
        return;
    }
    out.push(b'"');
    out.extend_from_slice(b);
    out.extend_from_slice(b"\":");
}

/// A string with bytes to escape (newlines in text, quotes), out of line:
/// the common path above stays small.
#[inline(never)]
fn write_escaped(out: &mut Vec<u8>, b: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(b.len() + 2);
    out.push(b'"');
    let mut start = 0;
    while let Some(i) = b
        .get(start..)
        .and_then(|rest| rest.iter().position(is_special))
        .map(|k| start + k)
    {
        out.extend_from_slice(b.get(start..i).unwrap_or_default());
        let c = b.get(i).copied().unwrap_or(0);
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x09 => out.extend_from_slice(b"\\t"),
            0x0a => out.extend_from_slice(b"\\n"),
            0x0c => out.extend_from_slice(b"\\f"),
            0x0d => out.extend_from_slice(b"\\r"),
            _ => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(c >> 4)],
                HEX[usize::from(c & 0xf)],
            ]),
        }
        start = i + 1;
    }
    out.extend_from_slice(b.get(start..).unwrap_or_default());
    out.push(b'"');
}

/// A sequence, map or struct being written: whether a member was written yet.
struct Compound<'w, 'a> {
    w: &'w mut Writer<'a>,
    first: bool,
    /// What `end` writes: `]`, `}`, or `]}` / `}}` for an enum variant's.
    close: &'static [u8],
}

impl<'w, 'a> Compound<'w, 'a> {
    fn open(w: &'w mut Writer<'a>, open: &[u8], close: &'static [u8]) -> Self {
        put(w.out, open);
        Compound {
            w,
            first: true,
            close,
        }
    }

    fn comma(&mut self) {
        if !self.first {
            self.w.out.push(b',');
        }
        self.first = false;
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        self.comma();
        value.serialize(&mut *self.w)
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Unsupported> {
        self.comma();
        write_key(self.w.out, key);
        value.serialize(&mut *self.w)
    }

    fn finish(self) -> Result<(), Unsupported> {
        put(self.w.out, self.close);
        Ok(())
    }
}

/// Punctuation: nearly always one byte, pushed (a slice of unknown length
/// is copied with a call to `memcpy`).
#[inline]
fn put(out: &mut Vec<u8>, p: &[u8]) {
    match p {
        [c] => out.push(*c),
        _ => out.extend_from_slice(p),
    }
}

/// `{"variant":` for an enum variant with content.
fn variant_open(w: &mut Writer<'_>, variant: &str) {
    w.out.push(b'{');
    write_str(w.out, variant);
    w.out.push(b':');
}

impl<'w, 'a> ser::Serializer for &'w mut Writer<'a> {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = Compound<'w, 'a>;
    type SerializeTuple = Compound<'w, 'a>;
    type SerializeTupleStruct = Compound<'w, 'a>;
    type SerializeTupleVariant = Compound<'w, 'a>;
    type SerializeMap = Compound<'w, 'a>;
    type SerializeStruct = Compound<'w, 'a>;
    type SerializeStructVariant = Compound<'w, 'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Unsupported> {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), Unsupported> {
        self.number(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Unsupported> {
        self.number(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Unsupported> {
        self.number(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Unsupported> {
        self.number(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Unsupported> {
        self.number(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Unsupported> {
        self.number(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Unsupported> {
        self.number(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Unsupported> {
        self.number(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Unsupported> {
        self.number(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Unsupported> {
        self.number(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Unsupported> {
        self.number(v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Unsupported> {
        self.number(v)
    }
    fn serialize_char(self, v: char) -> Result<(), Unsupported> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), Unsupported> {
        write_str(self.out, v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Unsupported> {
        // An array of numbers, as `serde_json` writes bytes.
        let mut seq = Compound::open(self, b"[", b"]");
        for b in v {
            seq.element(b)?;
        }
        seq.finish()
    }
    fn serialize_none(self) -> Result<(), Unsupported> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Unsupported> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Unsupported> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Unsupported> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Unsupported> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Unsupported> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Unsupported> {
        variant_open(self, variant);
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'w, 'a>, Unsupported> {
        Ok(Compound::open(self, b"[", b"]"))
    }
    fn serialize_tuple(self, _: usize) -> Result<Compound<'w, 'a>, Unsupported> {
        Ok(Compound::open(self, b"[", b"]"))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Compound<'w, 'a>, Unsupported> {
        Ok(Compound::open(self, b"[", b"]"))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'w, 'a>, Unsupported> {
        variant_open(self, variant);
        Ok(Compound::open(self, b"[", b"]}"))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'w, 'a>, Unsupported> {
        Ok(Compound::open(self, b"{", b"}"))
    }
    fn serialize_struct(
        self,
        name: &'static str,
        _: usize,
    ) -> Result<Compound<'w, 'a>, Unsupported> {
        if name.starts_with('$') {
            if name == RAW_VALUE_TOKEN {
                // Its one field's text is written as it is (`serialize_field`
                // knows it by the empty `close`).
                return Ok(Compound {
                    w: self,
                    first: true,
                    close: b"",
                });
            }
            // Another of `serde_json`'s special structs (arbitrary-precision
            // numbers): its own writer knows them.
            return Err(Unsupported);
        }
        Ok(Compound::open(self, b"{", b"}"))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'w, 'a>, Unsupported> {
        variant_open(self, variant);
        Ok(Compound::open(self, b"{", b"}}"))
    }
}

/// The sequence-like compounds: each element written after a comma.
macro_rules! elements {
    ($($trait:ident :: $method:ident),*) => {$(
        impl ser::$trait for Compound<'_, '_> {
            type Ok = ();
            type Error = Unsupported;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
                self.element(value)
            }
            fn end(self) -> Result<(), Unsupported> {
                self.finish()
            }
        }
    )*};
}

elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Unsupported> {
        self.comma();
        key.serialize(KeyWriter {
            out: &mut *self.w.out,
        })?;
        self.w.out.push(b':');
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        value.serialize(&mut *self.w)
    }
    fn end(self) -> Result<(), Unsupported> {
        self.finish()
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Unsupported> {
        if self.close.is_empty() {
            // `serde_json`'s raw value: its text, verbatim.
            return value.serialize(RawText {
                out: &mut *self.w.out,
            });
        }
        self.field(key, value)
    }
    fn end(self) -> Result<(), Unsupported> {
        self.finish()
    }
}

impl ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Unsupported> {
        self.field(key, value)
    }
    fn end(self) -> Result<(), Unsupported> {
        self.finish()
    }
}

/// A map key: a string (or what serializes as one, as `serde_json` reads
/// keys: a char, a unit variant, a newtype around a string). `serde_json`
/// quotes number and bool keys; those are left to it.
struct KeyWriter<'a> {
    out: &'a mut Vec<u8>,
}

/// The text of `serde_json`'s raw value, written as it is.
struct RawText<'a> {
    out: &'a mut Vec<u8>,
}

/// Scalar `serialize_*` methods that refuse their value.
macro_rules! refuse {
    ($($name:ident: $t:ty),*) => {$(
        fn $name(self, _: $t) -> Result<(), Unsupported> {
            Err(Unsupported)
        }
    )*};
}

/// Everything but `serialize_str` (and, for keys, its aliases) is
/// [`Unsupported`] for these two.
macro_rules! only_strings {
    ($t:ident) => {
        impl ser::Serializer for $t<'_> {
            type Ok = ();
            type Error = Unsupported;
            type SerializeSeq = Impossible<(), Unsupported>;
            type SerializeTuple = Impossible<(), Unsupported>;
            type SerializeTupleStruct = Impossible<(), Unsupported>;
            type SerializeTupleVariant = Impossible<(), Unsupported>;
            type SerializeMap = Impossible<(), Unsupported>;
            type SerializeStruct = Impossible<(), Unsupported>;
            type SerializeStructVariant = Impossible<(), Unsupported>;

            fn serialize_str(self, v: &str) -> Result<(), Unsupported> {
                self.string(v)
            }
            fn serialize_char(self, v: char) -> Result<(), Unsupported> {
                self.alias(v.encode_utf8(&mut [0; 4]))
            }
            fn serialize_unit_variant(
                self,
                _: &'static str,
                _: u32,
                variant: &'static str,
            ) -> Result<(), Unsupported> {
                self.alias(variant)
            }
            fn serialize_newtype_struct<T: Serialize + ?Sized>(
                self,
                _: &'static str,
                value: &T,
            ) -> Result<(), Unsupported> {
                self.newtype(value)
            }
            refuse!(
                serialize_bool: bool,
                serialize_i8: i8,
                serialize_i16: i16,
                serialize_i32: i32,
                serialize_i64: i64,
                serialize_u8: u8,
                serialize_u16: u16,
                serialize_u32: u32,
                serialize_u64: u64,
                serialize_f32: f32,
                serialize_f64: f64,
                serialize_bytes: &[u8]
            );
            fn serialize_none(self) -> Result<(), Unsupported> {
                Err(Unsupported)
            }
            fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Unsupported> {
                Err(Unsupported)
            }
            fn serialize_unit(self) -> Result<(), Unsupported> {
                Err(Unsupported)
            }
            fn serialize_unit_struct(self, _: &'static str) -> Result<(), Unsupported> {
                Err(Unsupported)
            }
            fn serialize_newtype_variant<T: Serialize + ?Sized>(
                self,
                _: &'static str,
                _: u32,
                _: &'static str,
                _: &T,
            ) -> Result<(), Unsupported> {
                Err(Unsupported)
            }
            fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Unsupported> {
                Err(Unsupported)
            }
            fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Unsupported> {
                Err(Unsupported)
            }
            fn serialize_tuple_struct(
                self,
                _: &'static str,
                _: usize,
            ) -> Result<Self::SerializeTupleStruct, Unsupported> {
                Err(Unsupported)
            }
            fn serialize_tuple_variant(
                self,
                _: &'static str,
                _: u32,
                _: &'static str,
                _: usize,
            ) -> Result<Self::SerializeTupleVariant, Unsupported> {
                Err(Unsupported)
            }
            fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Unsupported> {
                Err(Unsupported)
            }
            fn serialize_struct(
                self,
                _: &'static str,
                _: usize,
            ) -> Result<Self::SerializeStruct, Unsupported> {
                Err(Unsupported)
            }
            fn serialize_struct_variant(
                self,
                _: &'static str,
                _: u32,
                _: &'static str,
                _: usize,
            ) -> Result<Self::SerializeStructVariant, Unsupported> {
                Err(Unsupported)
            }
        }
    };
}

only_strings!(KeyWriter);
only_strings!(RawText);

impl KeyWriter<'_> {
    fn string(self, v: &str) -> Result<(), Unsupported> {
        write_str(self.out, v);
        Ok(())
    }
    fn alias(self, v: &str) -> Result<(), Unsupported> {
        self.string(v)
    }
    fn newtype<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Unsupported> {
        value.serialize(self)
    }
}

impl RawText<'_> {
    fn string(self, v: &str) -> Result<(), Unsupported> {
        self.out.extend_from_slice(v.as_bytes());
        Ok(())
    }
    fn alias(self, _: &str) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn newtype<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
}

#[cfg(test)]
mod tests;
