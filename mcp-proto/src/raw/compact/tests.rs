#![allow(clippy::unwrap_used)]
use std::collections::BTreeMap;

use proptest::prelude::*;
use serde::Serialize;
use serde_json::Value;

use super::*;

/// What the compact writer writes for `v`, or `None` where it leaves `v` to `serde_json`.
fn ours<T: Serialize + ?Sized>(v: &T) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    write(v, &mut out).ok().map(|()| out)
}

fn same<T: Serialize + ?Sized>(v: &T) {
    let want = serde_json::to_vec(v).unwrap();
    let got = ours(v).expect("handled by the compact writer");
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&want)
    );
}

#[test]
fn every_escape_is_written_as_serde_json_writes_it() {
    let mut all = String::new();
    for c in (0u8..0x80).map(char::from) {
        all.push(c);
        same(&c);
        same(&format!("ab{c}cdefghijklmnopqrstuvwxyz0123456789{c}{c}"));
    }
    all.push_str("é\u{7f}\u{2028}😀/");
    same(&all);
    // Long runs (the `memchr` search), with the byte to escape at every
    // distance from the start.
    for at in 0..80 {
        for special in ['"', '\\', '\n', '\u{1}', '\u{1f}'] {
            let mut s = "x".repeat(100);
            s.insert(at, special);
            same(&s);
            s.insert(at + 1, 'é');
            same(&s);
        }
    }
    same("");
    same(&"y".repeat(5000));
}

#[derive(Serialize)]
struct Params<'a> {
    name: &'a str,
    arguments: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<u8>,
    unit: (),
    tuple: (i8, u64, f32, f64),
    bytes: serde_bytes_like::Bytes<'a>,
    chars: [char; 2],
    e: Vec<E>,
    n: Newtype,
    #[serde(flatten)]
    flat: BTreeMap<String, i64>,
    empty: Vec<u8>,
    empty_map: BTreeMap<String, u8>,
    big: (i128, u128),
    nan: f64,
}

/// `serialize_bytes`, without a dependency.
mod serde_bytes_like {
    pub(super) struct Bytes<'a>(pub(super) &'a [u8]);
    impl serde::Serialize for Bytes<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(self.0)
        }
    }
}

#[derive(Serialize)]
struct Newtype(String);

#[derive(Serialize)]
enum E {
    Unit,
    New(u8),
    Tuple(u8, String),
    EmptyTuple(),
    Struct { a: bool, b: Option<String> },
    EmptyStruct {},
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
enum Tagged {
    Text { text: String },
    Image { data: String, mime_type: String },
}

#[test]
fn every_kind_of_value_is_written_as_serde_json_writes_it() {
    let args = serde_json::json!({"text": "hi\n", "n": [1, -2, 3.5, 1e300, null, true], "o": {}});
    let mut flat = BTreeMap::new();
    flat.insert("z\"".to_owned(), -7);
    same(&Params {
        name: "echo",
        arguments: &args,
        skipped: None,
        unit: (),
        tuple: (-8, u64::MAX, 1.5, 0.1),
        bytes: serde_bytes_like::Bytes(&[0, 1, 255]),
        chars: ['a', '"'],
        e: vec![
            E::Unit,
            E::New(3),
            E::Tuple(1, "t".into()),
            E::EmptyTuple(),
            E::Struct {
                a: true,
                b: Some("s".into()),
            },
            E::EmptyStruct {},
        ],
        n: Newtype("new".into()),
        flat,
        empty: Vec::new(),
        empty_map: BTreeMap::new(),
        big: (i128::MIN, u128::MAX),
        nan: f64::NAN,
    });
    same(&vec![
        Tagged::Text { text: "a".into() },
        Tagged::Image {
            data: "d".into(),
            mime_type: "image/png".into(),
        },
    ]);
    // serde_json's raw value, verbatim (the pre-encoded `_meta`).
    let raw = serde_json::value::to_raw_value(&args).unwrap();
    same(&serde_json::json!(null));
    same(&*raw);
    same(&crate::RawJson::from_value(&args).unwrap());
    same(&(1, &*raw, "x"));
    // Map keys serde_json reads as strings.
    let mut keys: BTreeMap<char, u8> = BTreeMap::new();
    keys.insert('k', 1);
    same(&keys);
    let mut variant_keys = BTreeMap::new();
    variant_keys.insert(Key::A, 1);
    same(&variant_keys);
}

#[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    A,
}

#[test]
fn what_it_leaves_to_serde_json() {
    let mut ints = BTreeMap::new();
    ints.insert(1, 2);
    assert_eq!(ours(&ints), None, "number keys are quoted by serde_json");
    let mut bools = BTreeMap::new();
    bools.insert(true, 2);
    assert_eq!(ours(&bools), None);
    struct Fails;
    impl Serialize for Fails {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("no"))
        }
    }
    assert_eq!(ours(&(1, Fails)), None);
    // And `RawJson::from_value` then encodes with serde_json, with its result.
    let raw = crate::RawJson::from_value(&ints).unwrap();
    assert_eq!(raw.as_str(), r#"{"1":2}"#);
    let err = crate::RawJson::from_value(&Fails).unwrap_err();
    assert_eq!(err.to_string(), "no");
}

fn value() -> impl Strategy<Value = Value> {
    let text = prop_oneof![
        "[ -~]{0,40}",
        "\\PC{0,20}",
        proptest::collection::vec(0u8..0x80, 0..50)
            .prop_map(|b| b.into_iter().map(char::from).collect::<String>()),
    ]
    .boxed();
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        text.clone().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 64, 8, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            proptest::collection::btree_map(text.clone(), inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn writes_what_serde_json_writes(v in value()) {
        let want = serde_json::to_vec(&v).unwrap();
        prop_assert_eq!(ours(&v), Some(want));
    }
}
