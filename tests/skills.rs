//! The Skills extension (SEP-2640) served over real sockets: a directory tree (`SKILL.md` and
//! files) with each file's digest and size, changes on disk picked up on the next request,
//! pagination of `skills/list` and `resources/directory/read`, and `-32602` for what is not
//! served — in both eras.

#![cfg(all(feature = "native", not(target_arch = "wasm32")))]

mod support;

use std::collections::BTreeMap;

use orkestrel_mcp::client::ClientEra;
use orkestrel_mcp::native::endpoint::EndpointOptions;
use orkestrel_mcp::native::skills::SkillDirectory;
use orkestrel_mcp::primitives::skills::{Skill, SkillResources, SKILLS_EXTENSION};
use orkestrel_mcp::{McpServer, ServerOptions};
use serde_json::{json, Value};
use support::client::{era_options, http_client_to};
use support::modern::{call, response};
use support::skills::{sha256, skill_md, Tree};
use support::{start, TestServer};

const FORMS: &str = "# Forms\n\nEvery field.\n";

/// A tree with a skill (and a supporting file in a subdirectory), a nested skill path, a broken
/// skill and a hidden file.
fn tree() -> Tree {
    let tree = Tree::new("served");
    tree.write(
        "pdf-processing/SKILL.md",
        skill_md(
            "pdf-processing",
            "Fill PDF forms",
            "See references/FORMS.md.\n",
        ),
    )
    .write("pdf-processing/references/FORMS.md", FORMS)
    .write("pdf-processing/.notes", "not served")
    .write(
        "acme/billing/refunds/SKILL.md",
        skill_md("refunds", "Refund requests", "Policy.\n"),
    )
    .write("broken/SKILL.md", "no frontmatter here\n")
    .write("misnamed/SKILL.md", skill_md("other-name", "d", ""))
    .write("outside.txt", "reachable only through a link");
    // A symbolic link (to a file outside every skill) is not followed.
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        tree.path().join("outside.txt"),
        tree.path().join("pdf-processing/link.md"),
    )
    .unwrap();
    tree
}

async fn serve(tree: &Tree, options: ServerOptions) -> (TestServer, McpServer) {
    let server = McpServer::new(options);
    let directory = SkillDirectory::open(tree.path()).unwrap();
    let problems = directory.problems();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems.iter().any(|p| p.starts_with("broken:")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.starts_with("misnamed:")),
        "{problems:?}"
    );
    server.skills().add_source(directory);
    let running = start(server.clone(), EndpointOptions::default()).await;
    (running, server)
}

/// The `resources` of each entry as `uri → (digest, size)`.
fn files(
    entries: &[orkestrel_mcp::primitives::skills::SkillEntry],
) -> BTreeMap<String, (String, u64)> {
    entries
        .iter()
        .flat_map(|e| match &e.resources {
            SkillResources::Listed(files) => files.clone(),
            SkillResources::Dynamic => panic!("a directory skill lists its files"),
        })
        .map(|f| (f.uri, (f.digest, f.size)))
        .collect()
}

#[tokio::test]
async fn a_directory_tree_is_served_with_each_files_digest_and_size_in_both_eras() {
    let tree = tree();
    let (running, _) = serve(&tree, ServerOptions::new("skills", "1")).await;
    let md = skill_md(
        "pdf-processing",
        "Fill PDF forms",
        "See references/FORMS.md.\n",
    );
    let refunds = skill_md("refunds", "Refund requests", "Policy.\n");
    let expected: BTreeMap<String, (String, u64)> = [
        ("skill://acme/billing/refunds/SKILL.md", refunds.as_bytes()),
        ("skill://pdf-processing/SKILL.md", md.as_bytes()),
        (
            "skill://pdf-processing/references/FORMS.md",
            FORMS.as_bytes(),
        ),
    ]
    .into_iter()
    .map(|(uri, bytes)| (uri.to_owned(), (sha256(bytes), bytes.len() as u64)))
    .collect();
    for era in [ClientEra::Legacy, ClientEra::Modern] {
        let client = http_client_to(&running.url(), era_options(era));
        client.connect().await.unwrap();
        let caps = client.server_capabilities().unwrap();
        assert_eq!(
            caps["extensions"][SKILLS_EXTENSION],
            json!({"directoryRead": true}),
            "{era:?}"
        );
        assert!(
            caps["resources"].is_object(),
            "skills are served as resources: {caps}"
        );
        let entries = client.list_skills().await.unwrap();
        assert_eq!(files(&entries), expected, "{era:?}");
        let pdf = entries
            .iter()
            .find(|e| e.name() == "pdf-processing")
            .unwrap();
        assert_eq!(pdf.description(), "Fill PDF forms");
        // The file read back is the one the digest describes, and the client verifies it.
        let loaded = client.load_skill(pdf).await.unwrap();
        assert_eq!(loaded.skill_md, md);
        let forms = client
            .read_skill_file(pdf, "references/FORMS.md")
            .await
            .unwrap();
        assert_eq!(forms, FORMS.as_bytes());
        // Directories: the skill root, its subdirectory, and the prefix levels of a nested path.
        let children = client
            .read_directory("skill://pdf-processing")
            .await
            .unwrap();
        let listed: Vec<(String, Option<String>)> =
            children.into_iter().map(|c| (c.uri, c.mime_type)).collect();
        assert_eq!(
            listed,
            vec![
                (
                    "skill://pdf-processing/SKILL.md".into(),
                    Some("text/markdown".into())
                ),
                (
                    "skill://pdf-processing/references".into(),
                    Some("inode/directory".into())
                ),
            ]
        );
        let acme = client.read_directory("skill://acme").await.unwrap();
        assert_eq!(acme[0].uri, "skill://acme/billing");
        // resources/list names each SKILL.md from its frontmatter; hidden files are not served.
        let resources = client.list_resources().await.unwrap();
        let skill_md_entry = resources
            .iter()
            .find(|r| r["uri"] == "skill://pdf-processing/SKILL.md")
            .unwrap();
        assert_eq!(
            (
                &skill_md_entry["name"],
                &skill_md_entry["description"],
                &skill_md_entry["mimeType"]
            ),
            (
                &json!("pdf-processing"),
                &json!("Fill PDF forms"),
                &json!("text/markdown")
            )
        );
        assert!(!resources
            .iter()
            .any(|r| r["uri"].as_str().unwrap().contains(".notes")
                || r["uri"].as_str().unwrap().contains("link")));
        client.disconnect().await;
    }
    // On the 2026-07-28 wire the skills results carry the cache attributes.
    for (method, params) in [
        ("skills/list", json!({})),
        (
            "skills/get",
            json!({"uri": "skill://pdf-processing/SKILL.md"}),
        ),
    ] {
        let result =
            response(&call(running.addr, json!(1), method, params).await)["result"].clone();
        assert_eq!(result["resultType"], "complete", "{method}: {result}");
        assert!(
            result["ttlMs"].is_u64() && result["cacheScope"].is_string(),
            "{method}: {result}"
        );
        assert!(result.get("nextCursor").is_none(), "{method}: {result}");
    }
}

#[tokio::test]
async fn changes_on_disk_are_served_at_the_next_request() {
    let tree = tree();
    let (running, _) = serve(&tree, ServerOptions::new("skills", "1")).await;
    let client = http_client_to(&running.url(), era_options(ClientEra::Legacy));
    client.connect().await.unwrap();
    let uri = "skill://pdf-processing/SKILL.md";
    let before = client.get_skill(uri).await.unwrap();
    // A supporting file rewritten: its digest and size change, the rest stays.
    let forms = "# Forms\n\nEvery field, and the new one.\n";
    tree.write("pdf-processing/references/FORMS.md", forms);
    let after = client.get_skill(uri).await.unwrap();
    let forms_uri = "skill://pdf-processing/references/FORMS.md";
    let file = after.resource(forms_uri).unwrap();
    assert_eq!(
        (file.digest.clone(), file.size),
        (sha256(forms), forms.len() as u64)
    );
    assert_eq!(after.resource(uri), before.resource(uri));
    assert_eq!(
        client
            .read_skill_file(&after, "references/FORMS.md")
            .await
            .unwrap(),
        forms.as_bytes()
    );
    // The same size, other bytes: seen too (the modification time moved).
    let same_size = forms.replace("new", "old");
    tree.write("pdf-processing/references/FORMS.md", &same_size);
    let again = client.get_skill(uri).await.unwrap();
    assert_eq!(
        again.resource(forms_uri).unwrap().digest,
        sha256(&same_size)
    );
    // A file added is listed; a skill fixed on disk appears; a skill removed is gone.
    tree.write("pdf-processing/scripts/run.py", "print('hi')\n");
    tree.write("broken/SKILL.md", skill_md("broken", "Now fixed", ""));
    tree.remove("acme");
    let names: Vec<String> = client
        .list_skills()
        .await
        .unwrap()
        .iter()
        .map(|e| e.name().to_owned())
        .collect();
    assert_eq!(names, ["broken", "pdf-processing"]);
    let grown = client.get_skill(uri).await.unwrap();
    assert!(grown
        .resource("skill://pdf-processing/scripts/run.py")
        .is_some());
    let gone = client
        .get_skill("skill://acme/billing/refunds/SKILL.md")
        .await
        .unwrap_err();
    assert_eq!(gone.code().map(|c| c.0), Some(-32602), "{gone}");
    client.disconnect().await;
}

#[tokio::test]
async fn skills_list_and_directory_reads_are_paginated_without_splitting_an_entry() {
    let server = McpServer::new(ServerOptions::new("skills", "1").with_page_size(1));
    for name in ["alpha", "beta", "gamma"] {
        let skill = Skill::new(name, skill_md(name, "d", ""))
            .and_then(|s| s.with_file("a.md", "a"))
            .and_then(|s| s.with_file("b/c.md", "c"))
            .unwrap();
        server.skills().add(skill);
    }
    let running = start(server, EndpointOptions::default()).await;
    for era in [ClientEra::Legacy, ClientEra::Modern] {
        let client = http_client_to(&running.url(), era_options(era));
        client.connect().await.unwrap();
        // One page at a time, each entry whole.
        let mut cursor: Option<String> = None;
        let mut pages = Vec::new();
        loop {
            let page = client
                .list_page("skills/list", cursor.as_deref())
                .await
                .unwrap();
            let skills = page["skills"].as_array().unwrap().clone();
            assert_eq!(skills.len(), 1, "{page}");
            assert_eq!(
                skills[0]["resources"].as_array().unwrap().len(),
                3,
                "{page}"
            );
            pages.push(skills[0]["frontmatter"]["name"].clone());
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
        }
        assert_eq!(
            pages,
            [json!("alpha"), json!("beta"), json!("gamma")],
            "{era:?}"
        );
        // The client walks the pages itself.
        assert_eq!(client.list_skills().await.unwrap().len(), 3);
        let children = client.read_directory("skill://beta").await.unwrap();
        let uris: Vec<&str> = children.iter().map(|c| c.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "skill://beta/SKILL.md",
                "skill://beta/a.md",
                "skill://beta/b"
            ]
        );
        let first = client
            .request(
                "resources/directory/read",
                Some(json!({"uri": "skill://beta"})),
                Default::default(),
            )
            .await
            .unwrap();
        assert_eq!(first["resources"].as_array().unwrap().len(), 1);
        assert!(first["nextCursor"].is_string(), "{first}");
        // A cursor that was never issued is refused.
        let bad = client
            .request(
                "skills/list",
                Some(json!({"cursor": "nope"})),
                Default::default(),
            )
            .await
            .unwrap_err();
        assert_eq!(bad.code().map(|c| c.0), Some(-32602), "{bad}");
        client.disconnect().await;
    }
}

#[tokio::test]
async fn what_is_not_served_is_invalid_params_in_both_eras() {
    let tree = tree();
    let (running, _) = serve(&tree, ServerOptions::new("skills", "1")).await;
    for era in [ClientEra::Legacy, ClientEra::Modern] {
        let client = http_client_to(&running.url(), era_options(era));
        client.connect().await.unwrap();
        let code =
            |r: Result<Value, orkestrel_mcp::ClientError>| r.unwrap_err().code().map(|c| c.0);
        let ask = |method: &'static str, params: Value| {
            let client = &client;
            async move {
                client
                    .request(method, Some(params), Default::default())
                    .await
            }
        };
        for (method, params) in [
            ("skills/get", json!({"uri": "skill://nope/SKILL.md"})),
            (
                "skills/get",
                json!({"uri": "skill://pdf-processing/references/FORMS.md"}),
            ),
            ("skills/get", json!({})),
            ("skills/get", json!({"uri": 7})),
            (
                "resources/directory/read",
                json!({"uri": "skill://pdf-processing/SKILL.md"}),
            ),
            ("resources/directory/read", json!({"uri": "skill://nope"})),
            (
                "resources/directory/read",
                json!({"uri": "skill://pdf-processing/"}),
            ),
        ] {
            let err = ask(method, params.clone()).await;
            assert_eq!(code(err), Some(-32602), "{era:?} {method} {params}");
        }
        let err = client.get_skill("skill://nope/SKILL.md").await.unwrap_err();
        assert!(
            err.to_string()
                .contains("No skill is served at skill://nope/SKILL.md"),
            "{err}"
        );
        // An unserved skill file: "resource not found" (-32002 on the handshake wire, -32602 on
        // the 2026-07-28 wire).
        let missing = code(
            ask(
                "resources/read",
                json!({"uri": "skill://pdf-processing/nope.md"}),
            )
            .await,
        );
        let want = if era == ClientEra::Legacy {
            -32002
        } else {
            -32602
        };
        assert_eq!(missing, Some(want), "{era:?}");
        client.disconnect().await;
    }
}

#[tokio::test]
async fn a_server_without_skills_declares_no_extension_and_answers_method_not_found() {
    let running = start(
        McpServer::new(ServerOptions::new("plain", "1")),
        EndpointOptions::default(),
    )
    .await;
    let client = http_client_to(&running.url(), era_options(ClientEra::Legacy));
    client.connect().await.unwrap();
    let caps = client.server_capabilities().unwrap();
    assert!(
        caps.get("extensions").is_none() && caps.get("resources").is_none(),
        "{caps}"
    );
    // The client does not send what the server did not declare.
    let err = client.list_skills().await.unwrap_err();
    assert!(
        matches!(err, orkestrel_mcp::ClientError::NotDeclared { .. }),
        "{err}"
    );
    let raw = client
        .request("skills/list", None, Default::default())
        .await
        .unwrap_err();
    assert_eq!(raw.code().map(|c| c.0), Some(-32601), "{raw}");
    client.disconnect().await;
}
