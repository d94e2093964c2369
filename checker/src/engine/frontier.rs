//! One BFS level of the explorer, kept packed in memory up to a budget and spilled to a
//! temporary file beyond it.
//!
//! A level is a list of blocks of at most a few hundred states. Workers append whole blocks
//! and claim whole blocks, so the level's order follows thread timing but its contents do not
//! (counts never depend on order). Every block is stored as bytes in its model's encoding
//! ([`Space::encode`]: the paper model's bit-exact one, 8–18 bytes a state at 3 agents; any
//! other model's generic [`crate::engine::codec`]); blocks past `frontier_mem_bytes` are appended to a
//! file under `spill_dir`, written in 1 MiB batches and read back one block at a time. The
//! spill file is removed when the level is dropped, which a stopped search (cancel flag,
//! memory ceiling) does too; a killed process leaves it behind: its name says what it is.
//!
//! A pass of the tests shows a spilled level yields exactly the states pushed into it; it does
//! not show anything about disk-full or I/O errors, which stop the run with a message.

use crate::engine::control::{Limits, Reporter};
use crate::engine::space::Space;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// States per frontier block (the unit a worker claims and appends).
pub const CHUNK: usize = 512;

/// Bytes collected before one write to the spill file.
const WRITE_BATCH: usize = 1 << 20;

/// Where and how much of each level the explorer may keep in memory, and what steers it.
#[derive(Clone, Debug)]
pub struct Storage {
    /// Pre-size the seen set for this many distinct states (0: grow as needed).
    pub expect_states: u64,
    /// Packed bytes of one level kept in memory before spilling (`u64::MAX`: never spill).
    pub frontier_mem_bytes: u64,
    /// Directory for spill files.
    pub spill_dir: PathBuf,
    /// The cancel flag and the memory ceiling.
    pub limits: Limits,
    /// Receives a snapshot at each level's end and every tick inside a level.
    pub progress: Option<Reporter>,
}

impl Default for Storage {
    fn default() -> Self {
        Storage {
            expect_states: 0,
            frontier_mem_bytes: 1 << 30,
            spill_dir: std::env::temp_dir(),
            limits: Limits {
                cancel: None,
                max_memory_bytes: u64::MAX,
            },
            progress: None,
        }
    }
}

enum Block {
    Packed(Vec<u8>),
    Spilled { offset: u64, len: usize },
}

/// A block of states ready to append to a level (packed outside the level's lock).
pub struct Packed {
    bytes: Vec<u8>,
    count: u64,
}

/// Packs a block of states with `space`'s encoding.
pub fn pack<S: Space>(space: &S, states: &[S::State]) -> Packed {
    let mut bytes = Vec::with_capacity(4 + 16 * states.len());
    bytes.extend_from_slice(&(states.len() as u32).to_le_bytes());
    for s in states {
        space.encode(s, &mut bytes);
    }
    bytes.shrink_to_fit();
    Packed {
        bytes,
        count: states.len() as u64,
    }
}

/// A spill file, deleted on drop.
struct SpillFile {
    path: PathBuf,
    file: Mutex<File>,
    pending: Vec<u8>,
    written: u64,
}

static SPILL_SEQ: AtomicU64 = AtomicU64::new(0);

impl SpillFile {
    fn create(dir: &Path) -> SpillFile {
        let seq = SPILL_SEQ.fetch_add(1, Ordering::Relaxed);
        let name = format!("agentsim-frontier-{}-{seq}.bin", std::process::id());
        let path = dir.join(name);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("cannot create spill file {}: {e}", path.display()));
        SpillFile {
            path,
            file: Mutex::new(file),
            pending: Vec::with_capacity(WRITE_BATCH),
            written: 0,
        }
    }

    /// Appends bytes; returns their offset.
    fn append(&mut self, bytes: &[u8]) -> u64 {
        let offset = self.written + self.pending.len() as u64;
        self.pending.extend_from_slice(bytes);
        if self.pending.len() >= WRITE_BATCH {
            self.flush();
        }
        offset
    }

    fn flush(&mut self) {
        let mut f = self.file.lock().expect("spill file poisoned");
        f.seek(SeekFrom::Start(self.written))
            .and_then(|_| f.write_all(&self.pending))
            .unwrap_or_else(|e| panic!("cannot write spill file {}: {e}", self.path.display()));
        self.written += self.pending.len() as u64;
        self.pending.clear();
    }

    fn read(&self, offset: u64, len: usize, buf: &mut Vec<u8>) {
        assert!(
            self.pending.is_empty(),
            "a level is read only once complete"
        );
        assert!(offset + len as u64 <= self.written, "block inside the file");
        buf.resize(len, 0);
        let mut f = self.file.lock().expect("spill file poisoned");
        f.seek(SeekFrom::Start(offset))
            .and_then(|_| f.read_exact(buf))
            .unwrap_or_else(|e| panic!("cannot read spill file {}: {e}", self.path.display()));
    }
}

impl Drop for SpillFile {
    fn drop(&mut self) {
        // Best effort: a leftover file is named for what it is.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// One BFS level, packed.
pub struct Level {
    blocks: Vec<Block>,
    states: u64,
    mem_bytes: u64,
    budget: u64,
    spill_dir: PathBuf,
    spill: Option<SpillFile>,
}

impl Level {
    /// An empty level with the storage limits of `storage`.
    pub fn new(storage: &Storage) -> Level {
        Level {
            blocks: Vec::new(),
            states: 0,
            mem_bytes: 0,
            budget: storage.frontier_mem_bytes,
            spill_dir: storage.spill_dir.clone(),
            spill: None,
        }
    }

    /// States in the level.
    pub fn len(&self) -> u64 {
        self.states
    }

    /// Whether the level holds no state.
    pub fn is_empty(&self) -> bool {
        self.states == 0
    }

    /// Blocks in the level (the unit workers claim).
    pub fn blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Bytes written to the spill file.
    pub fn spilled_bytes(&self) -> u64 {
        self.spill
            .as_ref()
            .map_or(0, |s| s.written + s.pending.len() as u64)
    }

    /// Packed bytes held in memory.
    pub fn mem_bytes(&self) -> u64 {
        self.mem_bytes
    }

    /// Appends a block made by [`pack`].
    pub fn push(&mut self, block: Packed) {
        self.states += block.count;
        let bytes = block.bytes;
        if self.mem_bytes + bytes.len() as u64 <= self.budget {
            self.mem_bytes += bytes.len() as u64;
            self.blocks.push(Block::Packed(bytes));
            return;
        }
        let dir = &self.spill_dir;
        let spill = self.spill.get_or_insert_with(|| SpillFile::create(dir));
        let offset = spill.append(&bytes);
        self.blocks.push(Block::Spilled {
            offset,
            len: bytes.len(),
        });
    }

    /// Ends writing: later calls only read.
    pub fn seal(&mut self) {
        if let Some(s) = &mut self.spill {
            s.flush();
        }
    }

    /// The states of block `i`, appended to `out` (`buf` is scratch for reading).
    pub fn load<S: Space>(&self, space: &S, i: usize, buf: &mut Vec<u8>, out: &mut Vec<S::State>) {
        let bytes: &[u8] = match &self.blocks[i] {
            Block::Packed(b) => b,
            Block::Spilled { offset, len } => {
                let spill = self.spill.as_ref().expect("a spilled block has a file");
                spill.read(*offset, *len, buf);
                buf
            }
        };
        let count = u32::from_le_bytes(bytes[..4].try_into().expect("4-byte count"));
        let mut at = 4;
        for _ in 0..count {
            let (s, used) = space.decode(&bytes[at..]);
            out.push(s);
            at += used;
        }
        assert_eq!(at, bytes.len(), "a block decodes to its end");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Bounds;
    use crate::engine::space::{StateView, StepText};
    use crate::property::PropSet;
    use agentsim_models::record::{Registry, ValueMap};
    use stateright::Model;

    /// A model of the engine's own, with no actions: its states exist only to be packed,
    /// spilled and read back (through the generic codec), so the test needs no real model.
    struct Tuples;

    #[derive(Clone, Copy, Debug, PartialEq)]
    struct NoAction;

    impl StepText for NoAction {
        fn describe(&self, _: &Bounds) -> String {
            String::new()
        }
        fn appends_record(&self) -> bool {
            false
        }
    }

    impl Model for Tuples {
        type State = (u64, u64, u64);
        type Action = NoAction;
        fn init_states(&self) -> Vec<Self::State> {
            vec![(0, 0, 0)]
        }
        fn actions(&self, _: &Self::State, _: &mut Vec<NoAction>) {}
        fn next_state(&self, _: &Self::State, _: NoAction) -> Option<Self::State> {
            None
        }
    }

    impl Space for Tuples {
        fn bounds(&self) -> Bounds {
            Bounds::paper(1, 1, 1)
        }
        fn fingerprint(&self, s: &Self::State) -> u64 {
            s.0
        }
        fn violations(&self, _: &Self::State, _: PropSet) -> PropSet {
            PropSet::default()
        }
        fn view(&self, _: &Self::State) -> StateView {
            StateView {
                log: Vec::new(),
                inflight: Vec::new(),
                registry: Registry::new(),
                memory: ValueMap::new(),
            }
        }
    }

    /// Distinct states of about 9 encoded bytes each (a paper-model state takes 8 to 18), in a
    /// fixed order.
    fn states(_: &Tuples, n: usize) -> Vec<(u64, u64, u64)> {
        (0..n as u64).map(|k| (k, k * 0x9e37_79b9, k % 7)).collect()
    }

    #[test]
    fn blocks_in_memory_and_spilled_read_back_in_order() {
        let m = Tuples;
        let all = states(&m, 1_000);
        let storage = Storage {
            frontier_mem_bytes: 2_000,
            ..Storage::default()
        };
        let mut level = Level::new(&storage);
        for block in all.chunks(100) {
            level.push(pack(&m, block));
        }
        level.seal();
        assert_eq!(level.len(), 1_000);
        assert_eq!(level.blocks(), 10);
        assert!(level.mem_bytes() > 0 && level.mem_bytes() <= 2_000);
        assert!(level.spilled_bytes() > 0);
        let path = level.spill.as_ref().unwrap().path.clone();
        assert!(path.exists());
        let (mut buf, mut back) = (Vec::new(), Vec::new());
        for i in 0..level.blocks() {
            level.load(&m, i, &mut buf, &mut back);
        }
        assert_eq!(back, all);
        drop(level);
        assert!(!path.exists(), "the spill file is removed with its level");
    }
}
