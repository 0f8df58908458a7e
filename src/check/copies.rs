//! Copies of the answer: anything in a task whose content is the
//! oracle's version of a file it changes, byte for byte or but for
//! whitespace, whatever its line lengths — a file of the working tree
//! (`src/lib.rs.orig`), a blob of the source's git store (`HEAD`'s tree,
//! the index, any object, reachable or not), or any other file under
//! `.git` (an rr-cache postimage, `ORIG_HEAD`, logs, a stash). A
//! distinctive line elsewhere is `leaks.rs`'s; this finds whole files.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use super::leaks::{MIN_LINE, git, read_text, walk};
use crate::decision::{Decision, parse_decision};
use crate::manifest::{Manifest, Oracle};

/// Most blobs read to compare but for whitespace (those of a size close
/// to an oracle file's).
const MAX_BLOBS: usize = 2_000;

/// An oracle file a copy of which is a leak.
struct Answer {
    /// The file the oracle changes.
    file: String,
    content: Vec<u8>,
    /// The content without whitespace.
    squeezed: Vec<u8>,
    blob: String,
}

impl Answer {
    fn matches(&self, text: &[u8]) -> bool {
        text == self.content.as_slice() || squeeze(text) == self.squeezed
    }
}

/// The content without any whitespace.
fn squeeze(text: &[u8]) -> Vec<u8> {
    text.iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect()
}

/// The evidence of every copy of the oracle's files in `manifest`'s task,
/// one line each.
pub(super) fn copy_leaks(manifest: &Manifest) -> Vec<String> {
    let answers = answers(manifest);
    if answers.is_empty() {
        return Vec::new();
    }
    let mut leaks = Vec::new();
    let source = &manifest.source;
    let mut files = Vec::new();
    walk(source, "", 0, &mut files);
    for rel in files {
        let Ok(text) = read_text(&source.join(&rel)) else {
            continue;
        };
        for answer in answers.iter().filter(|a| a.file != rel) {
            if answer.matches(text.as_bytes()) {
                leaks.push(format!(
                    "source/{rel} is a copy of the oracle's {}",
                    answer.file
                ));
            }
        }
    }
    let dot_git = source.join(".git");
    if dot_git.is_dir() {
        leaks.extend(git_file_copies(&dot_git, &answers));
        leaks.extend(git_object_copies(source, &answers));
    }
    leaks
}

/// The files the oracle changes, with their content once it is applied,
/// left out where that content is too short to tell or says what the
/// pristine file says but for whitespace.
fn answers(manifest: &Manifest) -> Vec<Answer> {
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    match &manifest.oracle {
        Some(Oracle::Patch(path)) => {
            files.extend(super::oracle::patched_files(manifest, path).unwrap_or_default());
        }
        Some(Oracle::Script(path)) => {
            let Ok(script) = crate::provider::load_script(path) else {
                return Vec::new();
            };
            for reply in &script.replies {
                match parse_decision(reply) {
                    Ok(Decision::WriteFile { path, content }) => {
                        files.insert(path, content);
                    }
                    Ok(Decision::ReplaceText {
                        path,
                        expected,
                        replacement,
                    }) => {
                        let text = files.entry(path.clone()).or_insert_with(|| {
                            fs::read_to_string(manifest.source.join(&path)).unwrap_or_default()
                        });
                        *text = text.replacen(&expected, &replacement, 1);
                    }
                    _ => {}
                }
            }
        }
        None => {}
    }
    files
        .into_iter()
        .filter_map(|(file, content)| {
            let squeezed = squeeze(content.as_bytes());
            let pristine = fs::read(manifest.source.join(&file)).unwrap_or_default();
            (squeezed.len() >= MIN_LINE && squeeze(&pristine) != squeezed).then(|| Answer {
                blob: crate::gitdiff::blob_id(content.as_bytes()),
                file,
                content: content.into_bytes(),
                squeezed,
            })
        })
        .collect()
}

/// Copies among the plain files under `.git` (its object store aside,
/// which is compressed and read through git).
fn git_file_copies(dot_git: &Path, answers: &[Answer]) -> Vec<String> {
    let mut files = Vec::new();
    walk(dot_git, "", 0, &mut files);
    let mut leaks = Vec::new();
    for rel in files.iter().filter(|rel| !rel.starts_with("objects/")) {
        let Ok(text) = read_text(&dot_git.join(rel)) else {
            continue;
        };
        for answer in answers {
            if answer.matches(text.as_bytes()) {
                leaks.push(format!(
                    "source/.git/{rel} is a copy of the oracle's {}",
                    answer.file
                ));
            }
        }
    }
    leaks
}

/// Copies in the object store: the oracle's exact blob, wherever it is
/// (`HEAD`'s tree, the index, a dangling object), and blobs of a close
/// size that match but for whitespace.
fn git_object_copies(source: &Path, answers: &[Answer]) -> Vec<String> {
    let mut leaks = Vec::new();
    let mut open: Vec<&Answer> = Vec::new();
    for answer in answers {
        if git(source, &["cat-file", "-e", &answer.blob]).is_some() {
            leaks.push(format!(
                "source/.git holds the oracle's {} as blob {}",
                answer.file, answer.blob
            ));
        } else {
            open.push(answer);
        }
    }
    if open.is_empty() {
        return leaks;
    }
    let listing = git(
        source,
        &[
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(objectname) %(objecttype) %(objectsize)",
        ],
    )
    .unwrap_or_default();
    let close = |size: usize| {
        open.iter().any(|a| {
            let (low, high) = (a.squeezed.len(), a.content.len() * 2 + 64);
            (low..=high).contains(&size)
        })
    };
    let candidates: Vec<&str> = listing
        .lines()
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            let (id, kind, size) = (parts.next()?, parts.next()?, parts.next()?);
            (kind == "blob" && size.parse().is_ok_and(close)).then_some(id)
        })
        .take(MAX_BLOBS)
        .collect();
    for (id, content) in read_blobs(source, &candidates) {
        for answer in &open {
            if squeeze(&content) == answer.squeezed {
                leaks.push(format!(
                    "source/.git holds the oracle's {} but for whitespace as blob {id}",
                    answer.file
                ));
            }
        }
    }
    leaks
}

/// The contents of the blobs `ids`, through one `git cat-file --batch`.
fn read_blobs(source: &Path, ids: &[&str]) -> Vec<(String, Vec<u8>)> {
    let Ok(mut child) = Command::new("git")
        .arg("-C")
        .arg(source)
        .args(["cat-file", "--batch"])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    else {
        return Vec::new();
    };
    let input = ids.join("\n") + "\n";
    if let Some(mut stdin) = child.stdin.take() {
        // Written from a thread: git answers while it reads.
        std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
    }
    let mut out = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        let mut reader = BufReader::new(stdout);
        let mut header = String::new();
        while reader.read_line(&mut header).is_ok_and(|n| n > 0) {
            let mut parts = header.split_whitespace();
            let id = parts.next().unwrap_or_default().to_string();
            let size = parts.nth(1).and_then(|s| s.parse::<u64>().ok());
            header.clear();
            let Some(size) = size else {
                continue;
            };
            let mut content = Vec::new();
            if (&mut reader).take(size).read_to_end(&mut content).is_err() {
                break;
            }
            let mut newline = [0u8; 1];
            let _ = reader.read_exact(&mut newline);
            out.push((id, content));
        }
    }
    let _ = child.wait();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_matches_byte_for_byte_or_but_for_whitespace() {
        let content = b"fn sum(n: u64) -> u64 {\n    (1..=n).sum()\n}\n".to_vec();
        let answer = Answer {
            file: "src/lib.rs".into(),
            squeezed: squeeze(&content),
            blob: crate::gitdiff::blob_id(&content),
            content,
        };
        assert!(answer.matches(b"fn sum(n: u64) -> u64 {\n    (1..=n).sum()\n}\n"));
        assert!(answer.matches(b"fn sum(n: u64)\n-> u64 {\n\t(1..=n).sum()\n}"));
        assert!(!answer.matches(b"fn sum(n: u64) -> u64 {\n    (1..n).sum()\n}\n"));
    }
}
