//! The export's input, a line at a time: a file read in blocks (lines handed out in place) or
//! text already in memory, with the byte-order mark and `\r\n` handled as `str::lines` and
//! `read_to_string` would. Both passes over an export read it through here (the index, then
//! the mapping).

use crate::error::IngestError;
use std::io::Read;
use std::path::Path;

type R<T> = Result<T, IngestError>;

/// Where the export is: a file (read twice, a line at a time) or text already in memory.
#[derive(Clone, Copy)]
pub enum Input<'a> {
    File(&'a Path),
    Text(&'a str),
}

pub(super) fn read_to_string(path: &Path, file: &str) -> R<String> {
    std::fs::read_to_string(path).map_err(|source| IngestError::Io {
        file: file.to_owned(),
        source,
    })
}

/// Calls `f` with each line (1-based number, text without `\n` or a final `\r`, as
/// `str::lines` splits), after a leading byte-order mark is dropped.
pub(super) fn lines(
    input: Input<'_>,
    file: &str,
    mut f: impl FnMut(usize, &str) -> R<bool>,
) -> R<()> {
    let io = |source| IngestError::Io {
        file: file.to_owned(),
        source,
    };
    match input {
        Input::Text(text) => {
            let text = text.strip_prefix('\u{feff}').unwrap_or(text);
            for (i, line) in text.lines().enumerate() {
                if !f(i + 1, line)? {
                    break;
                }
            }
        }
        Input::File(path) => {
            let handle = std::fs::File::open(path).map_err(io)?;
            read_lines(handle, 0, file, f)?;
        }
    }
    Ok(())
}

/// [`lines`] of a reader whose first line is line `before + 1` (a byte-order mark is dropped
/// only from line 1); stops when `f` says so. The number of the last line read.
pub(super) fn read_lines(
    mut handle: impl Read,
    before: usize,
    file: &str,
    mut f: impl FnMut(usize, &str) -> R<bool>,
) -> R<usize> {
    let io = |source| IngestError::Io {
        file: file.to_owned(),
        source,
    };
    // Lines are handed out of a block of the file in place; a block starts with what the last
    // one left of an unfinished line.
    let mut buf: Vec<u8> = Vec::with_capacity(BLOCK);
    let mut n = before;
    loop {
        let got = (&mut handle)
            .take(BLOCK as u64)
            .read_to_end(&mut buf)
            .map_err(io)?;
        let mut at = 0;
        while let Some(i) = memchr::memchr(b'\n', &buf[at..]) {
            n += 1;
            let line = &buf[at..at + i];
            at += i + 1;
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if !f(n, utf8(n, line).map_err(io)?)? {
                return Ok(n);
            }
        }
        if got == 0 {
            if at < buf.len() {
                n += 1;
                f(n, utf8(n, &buf[at..]).map_err(io)?)?;
            }
            return Ok(n);
        }
        buf.drain(..at);
    }
}

/// How much of a file is read at a time.
const BLOCK: usize = 1 << 20;

/// A line's text (a leading byte-order mark dropped from the first), or the error
/// `read_to_string` gives for the same file.
fn utf8(n: usize, line: &[u8]) -> std::io::Result<&str> {
    let line = match n {
        1 => line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line),
        _ => line,
    };
    std::str::from_utf8(line).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}
