//! An answer's markdown as plain blocks the page lays out with `textContent` only
//! (docs/design.md#web-page): the server never sends HTML, so nothing the model wrote can
//! become markup.

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
use serde::Serialize;

/// One block of an answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Block {
    /// `text`, `code`, `heading` or `list`.
    pub kind: &'static str,
    /// The block's text; a list's items one per line.
    pub text: String,
    /// A code block's language, when it names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
}

/// Blocks at most, and characters at most in all: a long answer is cut, never refused.
const MAX_BLOCKS: usize = 2000;
const MAX_CHARS: usize = 256 * 1024;

/// `markdown` as blocks: paragraphs and quotes as `text`, fenced or indented code as `code`
/// (its text verbatim), headings as `heading`, each list as one `list` block (an item a line);
/// inline marks (emphasis, links) dropped to their text, inline code kept as text; raw HTML
/// kept as the text it is.
pub fn blocks(markdown: &str) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let mut cur = String::new();
    let mut kind: Option<&'static str> = None;
    let mut lang = None;
    let mut list_depth = 0usize;
    let mut total = 0usize;
    let mut flush = |out: &mut Vec<Block>, cur: &mut String, kind: &'static str, lang| {
        let text = cur.trim_end_matches('\n').to_string();
        cur.clear();
        if text.trim().is_empty() || out.len() >= MAX_BLOCKS || total >= MAX_CHARS {
            return;
        }
        let text = crate::text::chars(&text, MAX_CHARS - total);
        total += text.len();
        out.push(Block { kind, text, lang });
    };
    for ev in Parser::new(markdown) {
        match ev {
            Event::Start(Tag::CodeBlock(k)) => {
                if let Some(kd) = kind.filter(|_| list_depth == 0) {
                    flush(&mut out, &mut cur, kd, None);
                }
                lang = match k {
                    CodeBlockKind::Fenced(l) => {
                        let l = l.split_whitespace().next().unwrap_or("").to_string();
                        (!l.is_empty()).then_some(crate::text::chars(&l, 32))
                    }
                    CodeBlockKind::Indented => None,
                };
                if list_depth == 0 {
                    kind = Some("code");
                }
            }
            Event::End(TagEnd::CodeBlock) if list_depth == 0 => {
                flush(&mut out, &mut cur, "code", lang.take());
                kind = None;
            }
            Event::Start(Tag::Heading { .. }) if list_depth == 0 => kind = Some("heading"),
            Event::End(TagEnd::Heading(_)) if list_depth == 0 => {
                flush(&mut out, &mut cur, "heading", None);
                kind = None;
            }
            Event::Start(Tag::List(_)) => {
                if list_depth == 0 {
                    if let Some(kd) = kind {
                        flush(&mut out, &mut cur, kd, None);
                    }
                    kind = Some("list");
                }
                list_depth += 1;
            }
            Event::End(TagEnd::List(_)) => {
                list_depth = list_depth.saturating_sub(1);
                if list_depth == 0 {
                    flush(&mut out, &mut cur, "list", None);
                    kind = None;
                }
            }
            Event::Start(Tag::Item) => {
                if !cur.is_empty() && !cur.ends_with('\n') {
                    cur.push('\n');
                }
                cur.push_str(&"  ".repeat(list_depth.saturating_sub(1)));
            }
            Event::Start(Tag::Paragraph) if list_depth == 0 && kind.is_none() => {
                kind = Some("text")
            }
            Event::End(TagEnd::Paragraph) if list_depth == 0 => {
                if let Some(kd) = kind.take() {
                    flush(&mut out, &mut cur, kd, None);
                }
            }
            Event::End(TagEnd::Paragraph) => {}
            Event::End(TagEnd::BlockQuote(_)) | Event::End(TagEnd::Table) if list_depth == 0 => {
                if let Some(kd) = kind.take() {
                    flush(&mut out, &mut cur, kd, None);
                }
            }
            Event::Text(t) | Event::Code(t) | Event::Html(t) | Event::InlineHtml(t) => {
                if kind.is_none() {
                    kind = Some("text");
                }
                cur.push_str(&t);
            }
            Event::SoftBreak | Event::HardBreak => cur.push('\n'),
            Event::End(TagEnd::TableCell) => cur.push('\t'),
            Event::End(TagEnd::TableRow) | Event::End(TagEnd::TableHead) => cur.push('\n'),
            Event::Rule => {
                if let Some(kd) = kind.take() {
                    flush(&mut out, &mut cur, kd, None);
                }
            }
            _ => {}
        }
    }
    if let Some(kd) = kind {
        flush(&mut out, &mut cur, kd, lang);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(b: &[Block]) -> Vec<(&str, &str)> {
        b.iter().map(|b| (b.kind, b.text.as_str())).collect()
    }

    #[test]
    fn headings_paragraphs_lists_and_code_become_blocks() {
        let md = "# Done\n\nI fixed **the bug** in `main.rs`.\n\n- one\n- two\n  - nested\n\n```rust\nfn main() {}\n```\n\nBye.";
        let b = blocks(md);
        assert_eq!(
            kinds(&b),
            [
                ("heading", "Done"),
                ("text", "I fixed the bug in main.rs."),
                ("list", "one\ntwo\n  nested"),
                ("code", "fn main() {}"),
                ("text", "Bye."),
            ]
        );
        assert_eq!(b[3].lang.as_deref(), Some("rust"));
    }

    #[test]
    fn html_in_an_answer_stays_text() {
        let b = blocks("<script>alert(1)</script>\n\nsee <b>this</b>");
        let all: String = b.iter().map(|b| b.text.as_str()).collect();
        assert!(all.contains("<script>alert(1)</script>"), "{b:?}");
        assert!(all.contains("<b>this</b>"), "{b:?}");
    }

    #[test]
    fn plain_text_and_nothing() {
        assert_eq!(kinds(&blocks("just words")), [("text", "just words")]);
        assert!(blocks("").is_empty());
        assert!(blocks("\n\n  \n").is_empty());
    }
}
