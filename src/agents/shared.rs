//! What the panes of one resolution share, held without this layer naming any agent: each
//! agent keeps its own state here under a type of its own and finds it again by that type
//! (Claude Code its live session records, opencode and Kilo their one set of database
//! connections). What a caller keeps between resolutions it puts in before and takes out after.

use std::any::{Any, TypeId};
use std::collections::HashMap;

/// Per-agent state of one resolution, one value per type.
#[derive(Default)]
pub struct Shared {
    by_type: HashMap<TypeId, Box<dyn Any + Send>>,
}

impl Shared {
    /// The state of type `T`, its default the first time it is asked for.
    pub fn of<T: Any + Send + Default>(&mut self) -> &mut T {
        self.by_type
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Box::<T>::default())
            .downcast_mut::<T>()
            .unwrap_or_else(|| unreachable!("a value is kept under its own type"))
    }

    /// Puts in `value` as the state of its type (replacing any).
    pub fn put<T: Any + Send>(&mut self, value: T) {
        self.by_type.insert(TypeId::of::<T>(), Box::new(value));
    }

    /// Takes in the states of `other` of the types this one holds none of (the state of
    /// panes resolved on another thread).
    pub fn absorb(&mut self, other: Shared) {
        for (kind, value) in other.by_type {
            self.by_type.entry(kind).or_insert(value);
        }
    }

    /// Takes out the state of type `T`, if there is one.
    pub fn take<T: Any + Send>(&mut self) -> Option<T> {
        let value = self.by_type.remove(&TypeId::of::<T>())?;
        value.downcast::<T>().ok().map(|b| *b)
    }
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("states", &self.by_type.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq)]
    struct Mine(Vec<u32>);
    #[derive(Debug, Default, PartialEq)]
    struct Theirs(Vec<u32>);

    #[test]
    fn each_type_keeps_its_own_state() {
        let mut shared = Shared::default();
        shared.of::<Mine>().0.push(1);
        shared.of::<Mine>().0.push(2);
        assert_eq!(shared.of::<Theirs>(), &Theirs(vec![]));
        shared.put(Theirs(vec![7]));
        assert_eq!(shared.take::<Mine>(), Some(Mine(vec![1, 2])));
        assert_eq!(shared.take::<Mine>(), None);
        assert_eq!(shared.of::<Theirs>(), &Theirs(vec![7]));
    }

    #[test]
    fn absorbing_keeps_what_is_held_and_adds_what_is_not() {
        let mut shared = Shared::default();
        shared.put(Mine(vec![1]));
        let mut other = Shared::default();
        other.put(Mine(vec![2]));
        other.put(Theirs(vec![3]));
        shared.absorb(other);
        assert_eq!(shared.take::<Mine>(), Some(Mine(vec![1])));
        assert_eq!(shared.take::<Theirs>(), Some(Theirs(vec![3])));
    }
}
