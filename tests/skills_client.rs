//! The client side of the Skills extension (SEP-2640) over real sockets: entries listed with no
//! file fetched; a skill file whose size, digest or frontmatter differs from the held entry is
//! refused with a typed error and nothing after it is read (a scripted peer tampers, as no
//! honest server does; our own server shows the stale case); and the `orkestrel-mcp skills`
//! command against `orkestrel-mcp serve --skills DIR`.

#![cfg(all(feature = "native", not(target_arch = "wasm32")))]

mod support;

use std::sync::{Arc, Mutex};

use orkestrel_mcp::client::{ClientEra, SkillVerificationError};
use orkestrel_mcp::native::endpoint::EndpointOptions;
use orkestrel_mcp::native::skills::SkillDirectory;
use orkestrel_mcp::primitives::skills::{SkillResources, SKILLS_EXTENSION};
use orkestrel_mcp::{ClientError, McpServer, ServerOptions};
use serde_json::{json, Value};
use support::client::{accepted, era_options, fake_http, http_client_to, json_reply, Seen, BIN};
use support::server::spawn_listening;
use support::skills::{sha256, skill_md, Tree};
use support::{start, HANG_GUARD};
use tokio::time::timeout;

const SKILL: &str = "skill://pdf-processing/SKILL.md";
const FORMS: &str = "skill://pdf-processing/references/FORMS.md";
const FORMS_TEXT: &str = "Supporting content.\n";

fn good_md() -> String {
    skill_md(
        "pdf-processing",
        "Extract, fill, and assemble PDF documents",
        "Skill body.\n",
    )
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Tamper {
    None,
    Digest,
    Size,
    Frontmatter,
    Dynamic,
}

/// What the scripted server sends for `SKILL.md` under `tamper`.
fn served_md(tamper: Tamper) -> String {
    match tamper {
        Tamper::Digest => good_md().replace("Skill body.", "Evil body!!"),
        Tamper::Size => good_md() + "extra bytes\n",
        Tamper::Frontmatter | Tamper::Dynamic => good_md().replace(
            "Extract, fill, and assemble PDF documents",
            "Exfiltrate credentials",
        ),
        Tamper::None => good_md(),
    }
}

/// The entry the scripted server lists: honest about the good file, except for the
/// frontmatter case, where its digest and size describe the served file but its frontmatter
/// does not.
fn entry(tamper: Tamper) -> Value {
    let md = if tamper == Tamper::Frontmatter {
        served_md(tamper)
    } else {
        good_md()
    };
    let resources = if tamper == Tamper::Dynamic {
        json!("dynamic")
    } else {
        json!([
            {"uri": SKILL, "digest": sha256(&md), "size": md.len()},
            {"uri": FORMS, "digest": sha256(FORMS_TEXT), "size": FORMS_TEXT.len()},
        ])
    };
    json!({
        "uri": SKILL,
        "frontmatter": {"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"},
        "resources": resources,
    })
}

fn result(seen: &Seen, result: Value) -> support::client::Reply {
    let body = json!({"jsonrpc": "2.0", "id": seen.id(), "result": result}).to_string();
    json_reply("200 OK", "", &body)
}

/// The `initialize` result of a handshake-era server declaring the skills extension.
fn initialized(seen: &Seen) -> support::client::Reply {
    result(
        seen,
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"resources": {}, "extensions": {SKILLS_EXTENSION: {}}},
            "serverInfo": {"name": "scripted", "version": "1"},
        }),
    )
}

/// A handshake-era skills server that serves `SKILL.md` tampered with by `tamper`.
async fn scripted(tamper: Tamper) -> (String, Arc<Mutex<Vec<Seen>>>) {
    fake_http(move |seen| match seen.rpc_method() {
        Some("initialize") => initialized(seen),
        Some("skills/list") => result(seen, json!({"skills": [entry(tamper)]})),
        Some("skills/get") => result(seen, json!({"skill": entry(tamper)})),
        Some("resources/read") => {
            let uri = seen.body.as_ref().unwrap()["params"]["uri"]
                .as_str()
                .unwrap()
                .to_owned();
            let text = if uri == FORMS {
                FORMS_TEXT.to_owned()
            } else {
                served_md(tamper)
            };
            result(
                seen,
                json!({"contents": [{"uri": uri, "mimeType": "text/markdown", "text": text}]}),
            )
        }
        _ => accepted(),
    })
    .await
}

fn reads(seen: &Mutex<Vec<Seen>>) -> Vec<String> {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|s| s.rpc_method() == Some("resources/read"))
        .map(|s| {
            s.body.as_ref().unwrap()["params"]["uri"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[tokio::test]
async fn a_tampered_skill_md_is_refused_and_nothing_after_it_is_read() {
    for tamper in [Tamper::Digest, Tamper::Size, Tamper::Frontmatter] {
        let (url, seen) = scripted(tamper).await;
        let client = http_client_to(&url, era_options(ClientEra::Legacy));
        timeout(HANG_GUARD, async {
            client.connect().await.unwrap();
            let entries = client.list_skills().await.unwrap();
            assert!(reads(&seen).is_empty(), "listing fetches no file");
            let err = client.load_skill(&entries[0]).await.unwrap_err();
            let ClientError::Skill(why) = &err else {
                panic!("{tamper:?}: {err}")
            };
            assert_eq!(why.uri(), SKILL);
            match (tamper, why) {
                (
                    Tamper::Digest,
                    SkillVerificationError::DigestMismatch {
                        expected, actual, ..
                    },
                ) => {
                    assert_eq!(
                        (expected.clone(), actual.clone()),
                        (sha256(good_md()), sha256(served_md(tamper)))
                    );
                }
                (
                    Tamper::Size,
                    SkillVerificationError::SizeMismatch {
                        expected, actual, ..
                    },
                ) => {
                    assert_eq!(
                        (*expected, *actual),
                        (good_md().len() as u64, served_md(tamper).len() as u64)
                    );
                }
                (
                    Tamper::Frontmatter,
                    SkillVerificationError::FrontmatterMismatch { fields, .. },
                ) => {
                    assert_eq!(fields, &["description"]);
                }
                other => panic!("{tamper:?}: {other:?}"),
            }
            assert!(
                err.to_string().contains(SKILL),
                "the error names the file: {err}"
            );
            assert_eq!(reads(&seen), [SKILL], "{tamper:?}: only SKILL.md was read");
            client.disconnect().await;
        })
        .await
        .unwrap();
    }
}

#[tokio::test]
async fn files_are_verified_on_read_and_unlisted_files_are_never_requested() {
    let (url, seen) = scripted(Tamper::None).await;
    let client = http_client_to(&url, era_options(ClientEra::Legacy));
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let entry = client.get_skill(SKILL).await.unwrap();
        let loaded = client.load_skill(&entry).await.unwrap();
        assert_eq!(loaded.body(), "\nSkill body.\n");
        let forms = client
            .read_skill_file(&entry, "references/FORMS.md")
            .await
            .unwrap();
        assert_eq!(forms, FORMS_TEXT.as_bytes());
        for unlisted in ["references/OTHER.md", "skill://elsewhere/SKILL.md"] {
            let err = client.read_skill_file(&entry, unlisted).await.unwrap_err();
            assert!(
                matches!(
                    err,
                    ClientError::Skill(SkillVerificationError::Unlisted { .. })
                ),
                "{err}"
            );
        }
        assert_eq!(
            reads(&seen),
            [SKILL, FORMS],
            "no request for an unlisted file"
        );
        // An entry the held manifest does not describe: a listed file with another digest.
        let mut stale = entry.clone();
        if let SkillResources::Listed(files) = &mut stale.resources {
            files[1].digest = sha256("an older version\n");
        }
        let err = client
            .read_skill_file(&stale, "references/FORMS.md")
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                ClientError::Skill(SkillVerificationError::DigestMismatch { .. })
            ),
            "{err}"
        );
        client.disconnect().await;
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_dynamic_skill_still_has_its_frontmatter_compared() {
    let (url, seen) = scripted(Tamper::Dynamic).await;
    let client = http_client_to(&url, era_options(ClientEra::Legacy));
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let entry = client.list_skills().await.unwrap().remove(0);
        assert_eq!(entry.resources, SkillResources::Dynamic);
        let err = client.load_skill(&entry).await.unwrap_err();
        assert!(
            matches!(
                err,
                ClientError::Skill(SkillVerificationError::FrontmatterMismatch { .. })
            ),
            "{err}"
        );
        // Nothing to verify a file against, but it must lie within the skill.
        assert_eq!(
            client
                .read_skill_file(&entry, "references/FORMS.md")
                .await
                .unwrap(),
            FORMS_TEXT.as_bytes()
        );
        let outside = client
            .read_skill_file(&entry, "skill://other/x.md")
            .await
            .unwrap_err();
        assert!(
            matches!(
                outside,
                ClientError::Skill(SkillVerificationError::Unlisted { .. })
            ),
            "{outside}"
        );
        assert_eq!(reads(&seen), [SKILL, FORMS]);
        client.disconnect().await;
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn an_entry_that_is_not_a_skill_entry_is_an_invalid_response() {
    for resources in [json!(5), json!("static"), json!([{"uri": SKILL}])] {
        let bad = json!({"uri": SKILL, "frontmatter": {"name": "a", "description": "b"}, "resources": resources});
        let (url, _) = fake_http(move |seen| match seen.rpc_method() {
            Some("initialize") => result(
                seen,
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"resources": {}, "extensions": {SKILLS_EXTENSION: {}}},
                    "serverInfo": {"name": "scripted", "version": "1"},
                }),
            ),
            Some("skills/list") => result(seen, json!({"skills": [bad.clone()]})),
            _ => accepted(),
        })
        .await;
        let client = http_client_to(&url, era_options(ClientEra::Legacy));
        client.connect().await.unwrap();
        let err = client.list_skills().await.unwrap_err();
        assert!(
            matches!(err, ClientError::InvalidResponse(_)),
            "{resources}: {err}"
        );
        client.disconnect().await;
    }
}

/// `skills/get` answering another skill's entry is an invalid response, and nothing is read (the
/// other skill's files were read, checked against its own entry, and shown as the one asked for).
#[tokio::test]
async fn a_skills_get_answering_another_skills_entry_is_refused() {
    let other = json!({"uri": "skill://other/SKILL.md",
        "frontmatter": {"name": "other", "description": "b"}, "resources": "dynamic"});
    let (url, seen) = fake_http(move |seen| match seen.rpc_method() {
        Some("initialize") => initialized(seen),
        Some("skills/get") => result(seen, json!({"skill": other.clone()})),
        _ => accepted(),
    })
    .await;
    let client = http_client_to(&url, era_options(ClientEra::Legacy));
    client.connect().await.unwrap();
    let err = client.get_skill(SKILL).await.unwrap_err();
    assert!(
        matches!(&err, ClientError::InvalidResponse(m) if m.contains("returned the entry of skill://other/SKILL.md")),
        "{err}"
    );
    assert!(reads(&seen).is_empty());
    client.disconnect().await;
}

#[tokio::test]
async fn a_held_entry_gone_stale_on_our_server_is_refused_until_refreshed() {
    let tree = Tree::new("stale");
    tree.write("pdf-processing/SKILL.md", good_md())
        .write("pdf-processing/references/FORMS.md", FORMS_TEXT);
    let server = McpServer::new(ServerOptions::new("skills", "1"));
    server
        .skills()
        .add_source(SkillDirectory::open(tree.path()).unwrap());
    let running = start(server, EndpointOptions::default()).await;
    let client = http_client_to(&running.url(), era_options(ClientEra::Modern));
    client.connect().await.unwrap();
    let held = client.list_skills().await.unwrap().remove(0);
    // The skill is updated after the entry was fetched: a longer SKILL.md, then a same-size
    // supporting file with other bytes.
    tree.write("pdf-processing/SKILL.md", good_md() + "More.\n");
    let err = client.load_skill(&held).await.unwrap_err();
    assert!(
        matches!(
            err,
            ClientError::Skill(SkillVerificationError::SizeMismatch { .. })
        ),
        "{err}"
    );
    tree.write(
        "pdf-processing/references/FORMS.md",
        FORMS_TEXT.to_uppercase(),
    );
    let err = client
        .read_skill_file(&held, "references/FORMS.md")
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ClientError::Skill(SkillVerificationError::DigestMismatch { .. })
        ),
        "{err}"
    );
    // Refreshing the entry (skills/get) recovers.
    let fresh = client.get_skill(&held.uri).await.unwrap();
    assert_ne!(fresh, held);
    assert!(client
        .load_skill(&fresh)
        .await
        .unwrap()
        .skill_md
        .ends_with("More.\n"));
    client.disconnect().await;
}

async fn cli(args: &[&str]) -> std::process::Output {
    timeout(
        HANG_GUARD,
        tokio::process::Command::new(BIN).args(args).output(),
    )
    .await
    .expect("orkestrel-mcp exits")
    .expect("orkestrel-mcp runs")
}

#[tokio::test]
async fn the_skills_command_lists_loads_and_refuses_against_real_processes() {
    let tree = Tree::new("cli");
    tree.write("pdf-processing/SKILL.md", good_md())
        .write("pdf-processing/references/FORMS.md", FORMS_TEXT);
    let dir = tree.path().to_str().unwrap().to_owned();
    let (url, _child) = spawn_listening(
        &["serve", "--http", "127.0.0.1:0", "--skills", &dir],
        "info",
    )
    .await;
    let listed = cli(&["skills", &url]).await;
    assert!(listed.status.success(), "{listed:?}");
    let entries: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(entries[0]["uri"], SKILL);
    assert_eq!(entries[0]["resources"][1]["digest"], sha256(FORMS_TEXT));
    let loaded = cli(&["skills", &url, "--load", SKILL]).await;
    assert!(loaded.status.success(), "{loaded:?}");
    assert_eq!(String::from_utf8(loaded.stdout).unwrap(), good_md());
    let file = cli(&[
        "skills",
        &url,
        "--load",
        SKILL,
        "--file",
        "references/FORMS.md",
    ])
    .await;
    assert_eq!(String::from_utf8(file.stdout).unwrap(), FORMS_TEXT);
    let unknown = cli(&["skills", &url, "--load", "skill://nope/SKILL.md"]).await;
    assert!(!unknown.status.success());
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("-32602"),
        "{unknown:?}"
    );
    // Against a tampered server: a failure naming the file and what differs, nothing printed.
    let (fake, _) = scripted(Tamper::Digest).await;
    let refused = cli(&["skills", &fake, "--era", "legacy", "--load", SKILL]).await;
    assert!(!refused.status.success());
    assert!(refused.stdout.is_empty(), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("skill verification failed") && stderr.contains(SKILL),
        "{stderr}"
    );
    let help = cli(&["skills", "--help"]).await;
    assert!(String::from_utf8_lossy(&help.stdout).contains("--load <URI>"));
}
