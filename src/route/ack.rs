//! Acknowledgement-only messages (docs/design.md#loop-guard): "thanks" → "you're welcome" →
//! "likewise" is correct small talk between people and an endless loop between machines. A relay
//! never forwards a message that says nothing else.

/// Phrases that, alone or strung together, make a message an acknowledgement. Written without
/// spaces or punctuation, lower case (see [`normalise`]).
const ACK_PHRASES: &[&str] = &[
    // English
    "thanks",
    "thank",
    "thankyou",
    "thx",
    "ty",
    "ok",
    "okay",
    "k",
    "kk",
    "cool",
    "great",
    "perfect",
    "done",
    "gotit",
    "got",
    "it",
    "understood",
    "noted",
    "sure",
    "np",
    "noproblem",
    "noproblems",
    "youre",
    "you",
    "are",
    "welcome",
    "anytime",
    "soundsgood",
    "sounds",
    "good",
    "lgtm",
    "nice",
    "awesome",
    "much",
    "so",
    "very",
    "alot",
    "again",
    "for",
    "the",
    "help",
    "your",
    "all",
    "too",
    "same",
    "to",
    "me",
    "glad",
    "happy",
    "i",
    "could",
    "helped",
    "bye",
    "cheers",
    "appreciate",
    "appreciated",
    "that",
    "will",
    "do",
    "roger",
    "ack",
    "alright",
    "allright",
    "fine",
    "excellent",
    "my",
    "pleasure",
    "likewise",
    "wise",
    "and",
    "keep",
    "up",
    "work",
    "have",
    "a",
    "day",
    "ill",
    "let",
    "know",
    "if",
    "need",
    "anything",
    "else",
    // Korean
    "고마워",
    "고마워요",
    "고맙습니다",
    "고맙다",
    "감사",
    "감사해",
    "감사해요",
    "감사합니다",
    "천만에요",
    "천만에",
    "아니에요",
    "아닙니다",
    "별말씀을요",
    "저야말로",
    "저도",
    "네",
    "넵",
    "예",
    "알겠습니다",
    "알겠어요",
    "알겠어",
    "좋아요",
    "좋아",
    "좋습니다",
    "완료",
    "완료했습니다",
    "확인",
    "확인했습니다",
    "수고하셨습니다",
    "수고했어",
    "도움이",
    "됐어",
    "됐어요",
    "되었어요",
    "되었습니다",
    "그럼",
    "계속해서",
    "잘",
    "부탁해",
    "부탁해요",
    "부탁드립니다",
    "앞으로도",
    // Chinese
    "谢谢",
    "多谢",
    "感谢",
    "谢谢你",
    "谢谢您",
    "不客气",
    "不用谢",
    "好的",
    "好",
    "收到",
    "明白",
    "明白了",
    "完成",
    "完成了",
    "了解",
    "没问题",
    "辛苦了",
    "太好了",
    "也",
    "非常",
    "你",
    "您",
    // Japanese
    "ありがとう",
    "ありがとうございます",
    "ありがとうございました",
    "どういたしまして",
    "了解です",
    "承知しました",
    "はい",
    "よろしく",
    "お願いします",
    "こちらこそ",
];

/// Longest acknowledgement considered, in characters after normalising.
const ACK_MAX_CHARS: usize = 48;

/// True when `text` says nothing but thanks / ok / you're welcome / done, in English, Korean,
/// Chinese or Japanese. Such answers are never relayed (the politeness loop).
pub fn is_acknowledgement(text: &str) -> bool {
    if text.chars().count() > 160 {
        return false;
    }
    let norm: Vec<char> = normalise(text).chars().collect();
    if norm.is_empty() || norm.len() > ACK_MAX_CHARS {
        return false;
    }
    // Can `norm` be cut into acknowledgement phrases? Dynamic programming over positions.
    let phrases: Vec<Vec<char>> = ACK_PHRASES.iter().map(|p| p.chars().collect()).collect();
    let mut reach = vec![false; norm.len() + 1];
    reach[0] = true;
    for i in 0..norm.len() {
        if !reach[i] {
            continue;
        }
        for p in &phrases {
            if norm[i..].starts_with(p) {
                reach[i + p.len()] = true;
            }
        }
    }
    reach[norm.len()]
}

/// Lower case, letters and digits only (Hangul and CJK are letters).
fn normalise(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acknowledgements_in_four_languages() {
        for ack in [
            "Thanks!",
            "thank you so much 🙏",
            "You're welcome.",
            "OK",
            "Done.",
            "Got it, thanks!",
            "Sounds good — LGTM",
            "고마워, 도움이 됐어",
            "아니에요, 저야말로",
            "그럼 계속해서 잘 부탁해",
            "감사합니다!",
            "谢谢！",
            "不客气。",
            "好的，收到",
            "ありがとうございます",
        ] {
            assert!(is_acknowledgement(ack), "{ack}");
        }
    }

    #[test]
    fn real_answers_are_not_acknowledgements() {
        for text in [
            "Done. I renamed `parse` to `parse_line` in src/lib.rs.",
            "Thanks — but the test still fails on line 12: expected 3, got 4.",
            "yes",
            "42",
            "",
            "감사합니다. 그런데 src/main.rs 12번째 줄에 버그가 있습니다.",
            "谢谢，但是第12行还有一个错误。",
            &"ok ".repeat(40),
        ] {
            assert!(!is_acknowledgement(text), "{text}");
        }
    }
}
