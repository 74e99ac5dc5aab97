use super::*;

#[test]
fn unknown_content_kind_is_kept() {
    let v = serde_json::json!({"type": "hologram", "frames": 3});
    let b: ContentBlock = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(b, ContentBlock::Unknown(v.clone()));
    assert_eq!(serde_json::to_value(&b).unwrap(), v);
}

#[test]
fn structured_only_call_result_decodes() {
    let r: CallToolResult =
        serde_json::from_str(r#"{"structuredContent": [1, 2], "x-extra": true}"#).unwrap();
    assert!(r.content.is_empty());
    assert_eq!(r.structured_content, Some(serde_json::json!([1, 2])));
    assert_eq!(r.extra["x-extra"], serde_json::json!(true));
}
