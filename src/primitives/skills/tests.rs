//! Building skills, their entries' shapes, digests and names, and the registry.

use super::*;

fn md(name: &str) -> String {
    format!("---\nname: {name}\ndescription: d\n---\n")
}

#[test]
fn building_a_skill_checks_its_path_name_files_and_limits() {
    let skill = Skill::new("acme/billing/refunds", md("refunds")).unwrap();
    assert_eq!(skill.uri(), "skill://acme/billing/refunds/SKILL.md");
    assert_eq!(skill.root(), "skill://acme/billing/refunds");
    let err = |r: Result<Skill, SkillError>| r.unwrap_err();
    assert!(matches!(
        err(Skill::new("x/other", md("refunds"))),
        SkillError::NameMismatch { .. }
    ));
    assert_eq!(
        err(Skill::new("Bad", md("Bad"))),
        SkillError::InvalidName("Bad".into())
    );
    for path in ["", "a//refunds", "../refunds", "a b/refunds", "a?/refunds"] {
        assert_eq!(
            err(Skill::new(path, md("refunds"))),
            SkillError::InvalidPath(path.into()),
            "{path}"
        );
    }
    assert!(matches!(
        err(Skill::new("a", "no frontmatter")),
        SkillError::Frontmatter(_)
    ));
    for file in ["SKILL.md", "/abs", "a/../b", "", "a//b"] {
        assert_eq!(
            err(skill.clone().with_file(file, "x")),
            SkillError::InvalidFile(file.into()),
            "{file}"
        );
    }
    let two = skill
        .clone()
        .with_file("b.md", "1")
        .unwrap()
        .with_file("a.md", "22")
        .unwrap();
    assert_eq!(
        err(two.clone().with_file("a.md", "3")),
        SkillError::DuplicateFile("a.md".into())
    );
    let paths: Vec<&str> = two.files().iter().map(SkillFile::path).collect();
    assert_eq!(paths, ["SKILL.md", "a.md", "b.md"]);
    assert_eq!(
        two.file("skill://acme/billing/refunds/a.md")
            .unwrap()
            .bytes(),
        b"22"
    );
    assert!(two.file("skill://acme/billing/a.md").is_none());
    let big = vec![0u8; MAX_SKILL_BYTES as usize];
    assert!(matches!(
        err(skill.clone().with_file("big.bin", big)),
        SkillError::TooLarge { .. }
    ));
    let mut many = skill;
    for i in 0..MAX_SKILL_RESOURCES - 1 {
        many.add_file(&format!("f{i}"), Arc::from(&b""[..]))
            .unwrap();
    }
    assert!(matches!(
        many.add_file("one-more", Arc::from(&b""[..])),
        Err(SkillError::TooLarge { files: 513, .. })
    ));
}

#[test]
fn entries_carry_the_spec_shapes_digests_and_names() {
    assert_eq!(
        digest(b""),
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    for (name, ok) in [
        ("pdf-processing", true),
        ("a", true),
        ("-a", false),
        ("a-", false),
        ("a--b", false),
        ("A", false),
        ("", false),
    ] {
        assert_eq!(is_valid_skill_name(name), ok, "{name}");
    }
    assert!(!is_valid_skill_name(&"a".repeat(65)));
    assert_eq!(
        skill_name_of("skill://acme/billing/refunds/SKILL.md"),
        Some("refunds")
    );
    assert_eq!(skill_name_of("github://o/r/x/SKILL.md"), Some("x"));
    assert_eq!(skill_name_of("skill://x/README.md"), None);
    assert_eq!(mime_type_of("a/b.MD", b""), "text/markdown");
    assert_eq!(mime_type_of("blob", &[0xff]), "application/octet-stream");
    let skill = Skill::new("pdf", md("pdf"))
        .unwrap()
        .with_file("bin", vec![0xff])
        .unwrap();
    let entry = skill.entry();
    let json = serde_json::to_value(&entry).unwrap();
    assert_eq!(
        json["resources"][1],
        json!({"uri": "skill://pdf/bin", "digest": digest(&[0xff]), "size": 1})
    );
    assert_eq!(serde_json::from_value::<SkillEntry>(json).unwrap(), entry);
    assert_eq!(
        serde_json::to_value(SkillResources::Dynamic).unwrap(),
        json!("dynamic")
    );
    assert!(serde_json::from_value::<SkillResources>(json!("static")).is_err());
    assert_eq!(
        serde_json::to_value(skill.files()[1].contents()).unwrap()["blob"],
        "/w=="
    );
    assert_eq!(
        entry.resolve("./references/A.md"),
        "skill://pdf/references/A.md"
    );
    assert_eq!(entry.resolve("x://y"), "x://y");
    let registry = SkillRegistry::new();
    assert!(registry.is_empty());
    registry.add(skill);
    assert_eq!(registry.list(), vec![entry.clone()]);
    assert_eq!(registry.get("skill://pdf/SKILL.md").unwrap(), entry);
    assert_eq!(
        registry.get("skill://pdf/bin").unwrap_err().code,
        crate::ErrorCode::INVALID_PARAMS
    );
    assert!(registry.remove("skill://pdf/SKILL.md") && registry.is_empty());
}
