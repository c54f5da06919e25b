//! Routing (docs/design.md#routing): hand one pane's clean answer to another pane, safely, exactly
//! once. `sanitize` (untrusted text) → `transform` (summary, ai) → `template` → `deliver` (paste,
//! verify, Enter) with `queue` (persisted messages + journal) and `relay` (bounded automatic
//! back-and-forth, which never forwards an `ack`-only message).

pub mod ack;
pub mod deliver;
pub mod outbox;
pub mod queue;
pub mod recipient;
pub mod relay;
pub mod relays;
pub mod sanitize;
pub mod source;
pub mod template;
pub mod transform;

pub use ack::is_acknowledgement;
pub use deliver::{deliver_queued, is_free, Delivered, Pass};
pub use queue::{Outcome, Queued, Store};
pub use recipient::{Recipient, Refusal};
pub use relay::{Action, RelayState, Turn};
pub use sanitize::sanitize;
