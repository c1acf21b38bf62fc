//! Where log lines go: a shared buffer that a background thread writes out in batches, the
//! way nginx's buffered access log does.
//!
//! Why not `tracing-appender`'s non-blocking writer: it sends each line through a channel and
//! wakes its writer thread for it, and on a cached answer that wake-up (a futex call and a
//! context switch) cost more than the answer itself. Here a line is a copy into a buffer under
//! a short lock; the writer wakes when a batch is full or the oldest line has waited
//! [`FLUSH_AFTER`], never per line. No line is dropped: when the buffer holds
//! [`MAX_PENDING`] bytes (a stuck disk), writers wait for room.
//!
//! A request answered from the front cache logs one line and nothing else, so its line needs
//! no order against other lines of its request: it is written straight into a buffer of the
//! answering thread's own ([`LogSink::append_staged`]) and reaches the shared one [`STAGE`]
//! bytes at a time, or when the writer sweeps the stages at each wake-up. Two async workers
//! appending every line to one buffer contend for its lock and its memory.

use std::cell::RefCell;
use std::fmt;
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

/// A batch this large is written at once. Each batch is a wake-up of the writer thread and a
/// write to the log file, on the same cores as the answers: at 64 KiB, a replica revalidating
/// its catalog at 130,000 answers/s (about 40 MB of lines a second) woke the writer 600 times
/// a second, and answered 4 % fewer 304s than at 512 KiB (eight alternating rounds, 2 cores,
/// 2026-11-29). Lines still wait at most [`FLUSH_AFTER`] when traffic is light.
const BATCH: usize = 512 * 1024;
/// The longest a line waits in the buffer when traffic is light.
pub const FLUSH_AFTER: Duration = Duration::from_millis(100);
/// Bytes held before a line waits for the writer (well above any burst).
const MAX_PENDING: usize = 16 * 1024 * 1024;
/// Bytes a thread stages before moving them to the shared buffer.
const STAGE: usize = 16 * 1024;

#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    /// The writer is asleep waiting for a full batch (so a full batch must wake it).
    writer_waiting: bool,
    /// Lines are waiting for room (so a written batch must wake them).
    room_wanted: bool,
    closed: bool,
}

struct Shared {
    pending: Mutex<Pending>,
    batch_ready: Condvar,
    room: Condvar,
    /// Every thread's stage ([`LogSink::append_staged`]), for the writer to sweep.
    stages: Mutex<Vec<Stage>>,
}

/// One thread's staged lines: locked by that thread per line and by the writer per sweep.
type Stage = Arc<Mutex<String>>;

thread_local! {
    /// This thread's stage in each sink it has staged lines in (a process has one; tests more).
    static STAGES: RefCell<Vec<(Weak<Shared>, Stage)>> = const { RefCell::new(Vec::new()) };
}

/// The buffer lines are appended to. Cloning shares it.
#[derive(Clone)]
pub struct LogSink {
    shared: Arc<Shared>,
}

/// Writes what is still buffered and stops the writer thread when dropped.
pub struct SinkGuard {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl LogSink {
    /// A sink whose lines `out` receives, in order, from a thread of its own.
    pub fn spawn(out: impl Write + Send + 'static) -> std::io::Result<(Self, SinkGuard)> {
        let shared = Arc::new(Shared {
            pending: Mutex::new(Pending { bytes: Vec::with_capacity(BATCH * 2), ..Pending::default() }),
            batch_ready: Condvar::new(),
            room: Condvar::new(),
            stages: Mutex::new(Vec::new()),
        });
        let writer = shared.clone();
        let thread =
            std::thread::Builder::new().name("wafuel-log".into()).spawn(move || write_out(&writer, out))?;
        Ok((Self { shared: shared.clone() }, SinkGuard { shared, thread: Some(thread) }))
    }

    /// Append the whole line (with its newline) that `write` writes, straight into this
    /// thread's stage: written after the thread's earlier staged lines, but not in order with
    /// lines appended otherwise (for a line that is all its request logs). A line `write`
    /// fails on is dropped whole.
    pub fn append_staged(&self, write: impl FnOnce(&mut String) -> fmt::Result) {
        let mut write = Some(write);
        let full = STAGES.try_with(|stages| {
            let mut stages = stages.borrow_mut();
            let mine =
                match stages.iter().position(|(sink, _)| Weak::as_ptr(sink) == Arc::as_ptr(&self.shared)) {
                    Some(at) => at,
                    None => {
                        stages.retain(|(sink, _)| sink.strong_count() > 0);
                        let stage = Stage::default();
                        wafuel_service::sync::lock(&self.shared.stages).push(stage.clone());
                        stages.push((Arc::downgrade(&self.shared), stage));
                        stages.len() - 1
                    }
                };
            let mut staged = wafuel_service::sync::lock(&stages[mine].1);
            let before = staged.len();
            if write.take().is_some_and(|write| write(&mut staged).is_err()) {
                staged.truncate(before);
            }
            (staged.len() >= STAGE).then(|| std::mem::replace(&mut *staged, String::with_capacity(STAGE * 2)))
        });
        // Outside the stage's lock: the writer takes the shared buffer's lock, then stages'.
        if let Ok(Some(lines)) = full {
            self.append(lines.as_bytes());
        }
        // The thread's locals are being torn down (a line logged by a destructor): the line
        // goes to the shared buffer.
        if let Some(write) = write {
            let mut line = String::new();
            if write(&mut line).is_ok() {
                self.append(line.as_bytes());
            }
        }
    }

    /// Append one whole line (with its newline): lines are never interleaved.
    pub fn append(&self, line: &[u8]) {
        let mut pending = wafuel_service::sync::lock(&self.shared.pending);
        while pending.bytes.len() + line.len() > MAX_PENDING && !pending.bytes.is_empty() && !pending.closed {
            pending.room_wanted = true;
            pending = self.shared.room.wait(pending).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        pending.bytes.extend_from_slice(line);
        if pending.writer_waiting && pending.bytes.len() >= BATCH {
            pending.writer_waiting = false;
            self.shared.batch_ready.notify_one();
        }
    }
}

/// The writer thread: take what is pending when a batch is full, the wait is over, or the
/// sink closes, and write it outside the lock.
fn write_out(shared: &Shared, mut out: impl Write) {
    let mut batch = Vec::with_capacity(BATCH * 2);
    loop {
        let closed = {
            let mut pending = wafuel_service::sync::lock(&shared.pending);
            if pending.bytes.len() < BATCH && !pending.closed {
                pending.writer_waiting = true;
                pending = shared
                    .batch_ready
                    .wait_timeout(pending, FLUSH_AFTER)
                    .map_or_else(|poisoned| poisoned.into_inner().0, |(guard, _)| guard);
                pending.writer_waiting = false;
            }
            sweep(shared, &mut pending.bytes);
            std::mem::swap(&mut pending.bytes, &mut batch);
            if pending.room_wanted {
                pending.room_wanted = false;
                shared.room.notify_all();
            }
            pending.closed
        };
        if !batch.is_empty() {
            // A failing stderr has nowhere to report to; the lines are dropped, not retried.
            let _ = out.write_all(&batch).and_then(|()| out.flush());
            // Keep the capacity of an ordinary batch, give back what a burst grew.
            batch.clear();
            batch.shrink_to(BATCH * 2);
        }
        if closed && wafuel_service::sync::lock(&shared.pending).bytes.is_empty() {
            return;
        }
    }
}

/// Moves every thread's staged lines into `pending`, and forgets the stages of threads that
/// have ended once they are empty.
fn sweep(shared: &Shared, pending: &mut Vec<u8>) {
    wafuel_service::sync::lock(&shared.stages).retain(|stage| {
        let mut staged = wafuel_service::sync::lock(stage);
        pending.extend_from_slice(staged.as_bytes());
        staged.clear();
        // Held by its thread too while that thread lives.
        Arc::strong_count(stage) > 1
    });
}

impl Drop for SinkGuard {
    fn drop(&mut self) {
        {
            let mut pending = wafuel_service::sync::lock(&self.shared.pending);
            pending.closed = true;
            self.shared.batch_ready.notify_one();
            self.shared.room.notify_all();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What `tracing-subscriber` writes one formatted event through.
pub struct SinkWriter<'a>(&'a LogSink);

impl Write for SinkWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.append(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogSink {
    type Writer = SinkWriter<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        SinkWriter(self)
    }
}

/// A destination that keeps what is written, for tests of what gets logged.
#[cfg(test)]
#[derive(Clone, Default)]
pub(crate) struct Captured(pub(crate) Arc<Mutex<Vec<u8>>>);

#[cfg(test)]
impl Captured {
    /// Everything written so far, as text.
    pub(crate) fn text(&self) -> String {
        String::from_utf8(wafuel_service::sync::lock(&self.0).clone()).expect("utf8")
    }
}

#[cfg(test)]
impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        wafuel_service::sync::lock(&self.0).extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;
    use std::time::Instant;

    fn text(out: &Captured) -> String {
        out.text()
    }

    fn staged(sink: &LogSink, line: &str) {
        sink.append_staged(|stage| stage.write_str(line));
    }

    /// A line whose writing fails leaves nothing of itself: the lines around it stay whole.
    #[test]
    fn a_staged_line_that_fails_to_write_is_dropped_whole() {
        let out = Captured::default();
        let (sink, guard) = LogSink::spawn(out.clone()).expect("spawn");
        staged(&sink, "before\n");
        sink.append_staged(|stage| {
            stage.write_str("half a li")?;
            Err(fmt::Error)
        });
        staged(&sink, "after\n");
        drop(guard);
        assert_eq!(text(&out), "before\nafter\n");
    }

    /// Threads 0 and 1 append to the shared buffer, 2 and 3 through their stages; every line
    /// is written once the guard is dropped, though the staging threads have ended by then.
    #[test]
    fn lines_from_many_threads_arrive_whole_and_in_each_threads_order() {
        let out = Captured::default();
        let (sink, guard) = LogSink::spawn(out.clone()).expect("spawn");
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let sink = sink.clone();
                std::thread::spawn(move || {
                    for i in 0..20_000 {
                        let line = format!("{t} {i} {}\n", "x".repeat(i % 90));
                        if t < 2 { sink.append(line.as_bytes()) } else { staged(&sink, &line) }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        drop(guard);
        let text = text(&out);
        let mut next = [0usize; 4];
        for line in text.lines() {
            let mut parts = line.split(' ');
            let t: usize = parts.next().and_then(|p| p.parse().ok()).expect("thread");
            let i: usize = parts.next().and_then(|p| p.parse().ok()).expect("index");
            assert_eq!(i, next[t], "thread {t}'s lines in order, none lost");
            assert_eq!(parts.next().map(str::len), Some(i % 90), "line whole");
            next[t] += 1;
        }
        assert_eq!(next, [20_000; 4]);
    }

    #[test]
    fn a_lone_line_is_written_after_a_short_wait_without_more_traffic() {
        let out = Captured::default();
        let (sink, _guard) = LogSink::spawn(out.clone()).expect("spawn");
        sink.append(b"alone\n");
        let deadline = Instant::now() + Duration::from_secs(5);
        while text(&out).is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(text(&out), "alone\n");
    }

    #[test]
    fn a_lone_staged_line_is_written_after_a_short_wait_while_its_thread_lives() {
        let out = Captured::default();
        let (sink, _guard) = LogSink::spawn(out.clone()).expect("spawn");
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let staging = {
            let sink = sink.clone();
            std::thread::spawn(move || {
                staged(&sink, "staged\n");
                // Alive, idle, its line far below a stage's worth: only the sweep writes it.
                let _ = done_rx.recv_timeout(Duration::from_secs(10));
            })
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while text(&out).is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(text(&out), "staged\n");
        assert!(!staging.is_finished(), "written while the staging thread still lives");
        drop(done_tx);
        staging.join().expect("thread");
    }

    #[test]
    fn stages_of_ended_threads_are_forgotten_once_swept() {
        let out = Captured::default();
        let (sink, guard) = LogSink::spawn(out.clone()).expect("spawn");
        for t in 0..8 {
            let sink = sink.clone();
            std::thread::spawn(move || staged(&sink, &format!("{t}\n"))).join().expect("thread");
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while (text(&out).lines().count() < 8 || !wafuel_service::sync::lock(&sink.shared.stages).is_empty())
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        drop(guard);
        let mut lines: Vec<String> = text(&out).lines().map(str::to_string).collect();
        lines.sort();
        assert_eq!(lines, (0..8).map(|t| t.to_string()).collect::<Vec<_>>());
        assert!(
            wafuel_service::sync::lock(&sink.shared.stages).is_empty(),
            "no stage kept for an ended thread"
        );
    }

    /// A line staged by a destructor as its thread ends, after the thread's own stage is torn
    /// down, is written, not lost, and panics nothing.
    #[test]
    fn a_line_staged_as_its_thread_ends_is_written() {
        struct LogsOnDrop(LogSink);
        impl Drop for LogsOnDrop {
            fn drop(&mut self) {
                staged(&self.0, "last words\n");
            }
        }
        thread_local! {
            static LAST: RefCell<Option<LogsOnDrop>> = const { RefCell::new(None) };
        }
        let out = Captured::default();
        let (sink, guard) = LogSink::spawn(out.clone()).expect("spawn");
        let ending = sink.clone();
        std::thread::spawn(move || {
            // Set before the stage exists, so torn down after it (thread locals end in the
            // reverse order of their first use).
            let staging = ending.clone();
            LAST.with_borrow_mut(|last| *last = Some(LogsOnDrop(ending)));
            staged(&staging, "first\n");
        })
        .join()
        .expect("the thread ends without a panic");
        drop(guard);
        let mut lines: Vec<String> = text(&out).lines().map(str::to_string).collect();
        lines.sort();
        assert_eq!(lines, ["first", "last words"]);
    }

    #[test]
    fn a_full_buffer_makes_writers_wait_instead_of_dropping() {
        /// A destination that blocks until told to go on: a stuck disk.
        struct Stuck(Arc<(Mutex<bool>, Condvar)>, Captured);
        impl Write for Stuck {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                let (go, cv) = &*self.0;
                let mut go = wafuel_service::sync::lock(go);
                while !*go {
                    go = cv.wait(go).expect("wait");
                }
                self.1.write(buf)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let out = Captured::default();
        let (sink, guard) = LogSink::spawn(Stuck(gate.clone(), out.clone())).expect("spawn");
        let line = vec![b'y'; 1023].into_iter().chain([b'\n']).collect::<Vec<u8>>();
        let lines = MAX_PENDING / line.len() * 3;
        let writer = {
            let sink = sink.clone();
            let line = line.clone();
            std::thread::spawn(move || {
                for _ in 0..lines {
                    sink.append(&line);
                }
            })
        };
        std::thread::sleep(Duration::from_millis(300));
        assert!(!writer.is_finished(), "more than the buffer holds: the writer waits");
        *wafuel_service::sync::lock(&gate.0) = true;
        gate.1.notify_all();
        writer.join().expect("writer");
        drop(guard);
        assert_eq!(wafuel_service::sync::lock(&out.0).len(), lines * line.len(), "nothing dropped");
    }
}
