//! The picker's terminal: raw mode on the alternate screen while it runs (restored on drop,
//! also on an error), keys read with a timeout so a refresh needs no busy loop, and whole
//! screens drawn from [`Line`]s.

use std::io::{IsTerminal, Stdout, Write};
use std::time::Duration;

use anyhow::{bail, Context as _, Result};
use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::style::{Attribute, Print, SetAttribute};
use crossterm::{cursor, queue, terminal};

use super::model::{Key, Line, View};

/// The terminal in picker mode.
pub struct Screen {
    out: Stdout,
}

/// What happened while waiting.
pub enum Input {
    Key(Key),
    /// The terminal changed size (or something else worth a redraw).
    Redraw,
    /// Nothing within the timeout.
    Idle,
}

impl Screen {
    /// Enters raw mode and the alternate screen.
    pub fn enter() -> Result<Screen> {
        if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
            bail!(
                "pick needs a terminal: run it in a tmux pane, or with --popup from a key binding"
            );
        }
        terminal::enable_raw_mode().context("cannot put the terminal in raw mode")?;
        let mut out = std::io::stdout();
        queue!(out, terminal::EnterAlternateScreen, cursor::Hide)?;
        out.flush()?;
        Ok(Screen { out })
    }

    /// The terminal's size (80×24 when it cannot be read).
    pub fn view(&self) -> View {
        let (w, h) = terminal::size().unwrap_or((80, 24));
        View {
            width: usize::from(w).max(1),
            height: usize::from(h).max(1),
        }
    }

    /// Draws `lines` from the top, clearing what is below them.
    pub fn draw(&mut self, lines: &[Line]) -> Result<()> {
        queue!(self.out, cursor::MoveTo(0, 0))?;
        for (i, line) in lines.iter().enumerate() {
            let row = u16::try_from(i).unwrap_or(u16::MAX);
            queue!(
                self.out,
                cursor::MoveTo(0, row),
                terminal::Clear(terminal::ClearType::CurrentLine)
            )?;
            if line.reverse {
                queue!(
                    self.out,
                    SetAttribute(Attribute::Reverse),
                    Print(&line.text),
                    SetAttribute(Attribute::Reset)
                )?;
            } else {
                queue!(self.out, Print(&line.text))?;
            }
        }
        queue!(
            self.out,
            terminal::Clear(terminal::ClearType::FromCursorDown)
        )?;
        self.out.flush()?;
        Ok(())
    }

    /// Waits at most `timeout` for a key (blocking in `poll`, not spinning).
    pub fn next(&self, timeout: Duration) -> Result<Input> {
        if !event::poll(timeout)? {
            return Ok(Input::Idle);
        }
        Ok(match event::read()? {
            Event::Key(k) if k.kind != KeyEventKind::Release => Input::Key(key_of(k)),
            Event::Resize(..) => Input::Redraw,
            _ => Input::Idle,
        })
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = queue!(
            self.out,
            SetAttribute(Attribute::Reset),
            cursor::Show,
            terminal::LeaveAlternateScreen
        );
        let _ = self.out.flush();
        let _ = terminal::disable_raw_mode();
    }
}

/// crossterm's key → the picker's.
fn key_of(k: KeyEvent) -> Key {
    match k.code {
        KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => Key::Interrupt,
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::PageUp => Key::PageUp,
        KeyCode::PageDown => Key::PageDown,
        KeyCode::Home => Key::Home,
        KeyCode::End => Key::End,
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        _ => Key::Other,
    }
}
