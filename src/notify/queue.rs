//! A small bounded queue between one producer that must never wait and one worker thread:
//! `push` drops the oldest item when full (and says so), `pop` blocks until an item or the
//! close.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};

#[derive(Debug)]
struct Inner<T> {
    items: VecDeque<T>,
    closed: bool,
}

/// The shared queue; clone the `Arc` to hand it to the worker.
#[derive(Debug)]
pub struct Queue<T> {
    inner: Mutex<Inner<T>>,
    ready: Condvar,
    capacity: usize,
}

impl<T> Queue<T> {
    pub fn new(capacity: usize) -> Arc<Queue<T>> {
        Arc::new(Queue {
            inner: Mutex::new(Inner {
                items: VecDeque::new(),
                closed: false,
            }),
            ready: Condvar::new(),
            capacity: capacity.max(1),
        })
    }

    /// Adds `item`; returns the oldest item dropped to make room, if any.
    pub fn push(&self, item: T) -> Option<T> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let dropped = (inner.items.len() >= self.capacity)
            .then(|| inner.items.pop_front())
            .flatten();
        inner.items.push_back(item);
        self.ready.notify_one();
        dropped
    }

    /// The next item; `None` once closed and empty.
    pub fn pop(&self) -> Option<T> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(item) = inner.items.pop_front() {
                return Some(item);
            }
            if inner.closed {
                return None;
            }
            inner = self.ready.wait(inner).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// No more items: the worker ends after the queued ones.
    pub fn close(&self) {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
        self.ready.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_queue_drops_the_oldest_and_close_ends_the_worker() {
        let q = Queue::new(2);
        assert_eq!(q.push(1), None);
        assert_eq!(q.push(2), None);
        assert_eq!(q.push(3), Some(1));
        let worker = {
            let q = q.clone();
            std::thread::spawn(move || std::iter::from_fn(|| q.pop()).collect::<Vec<_>>())
        };
        q.close();
        assert_eq!(worker.join().unwrap(), [2, 3]);
    }
}
