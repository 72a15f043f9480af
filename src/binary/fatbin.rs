//! The images of a fatbin container (what `nvcc -fatbin` writes): each
//! cubin and PTX text it holds, so that begen can list a fatbin's kernels
//! and check their parameters as it does a cubin's or a PTX file's.
//!
//! The container is a 16-byte header (magic `0xba55ed50`, version, header
//! size, the size of what follows) and then one entry per image: an entry
//! header (kind 1 = PTX, 2 = ELF; its own size; the payload's size; the
//! target `sm_XY`; flags) and the payload. The layout is not documented by
//! NVIDIA; begen reads only those fields, bounds-checks every one, and
//! treats an image it cannot read (a compressed payload, an unknown kind)
//! as unread rather than guessing: the check that would need it reports
//! that the fatbin's kernels could not all be listed.

use std::fmt;

use super::elf::{Cubin, ElfError};
use super::ptx::{self, PtxEntry, PtxError};
use crate::diag::messages::binary as bm;

/// The magic number at the start of a fatbin container.
pub(crate) const MAGIC: u32 = 0xba55_ed50;

const KIND_PTX: u16 = 1;
const KIND_ELF: u16 = 2;
/// Entry flags that mark a compressed payload (LZ4, then Zstandard in
/// newer toolkits).
const FLAG_COMPRESSED: u64 = 0x2000 | 0x8000;

/// One image of a fatbin.
#[derive(Debug, Clone)]
pub(crate) enum Image {
    /// An uncompressed cubin.
    Cubin(Cubin),
    /// Uncompressed PTX text's kernels.
    Ptx(Vec<PtxEntry>),
    /// An image begen does not read.
    Unread {
        /// The `sm_XY` it is for, as XY.
        sm: u32,
        /// Why it was not read.
        why: Unread,
    },
}

/// Why an image of a fatbin was not read.
#[derive(Debug, Clone)]
pub(crate) enum Unread {
    /// Its payload is compressed.
    Compressed,
    /// A cubin begen cannot read.
    Cubin(ElfError),
    /// PTX that is not UTF-8 text.
    NotUtf8(std::str::Utf8Error),
    /// PTX begen cannot read.
    Ptx(PtxError),
    /// An entry kind begen does not know.
    Kind(u16),
}

impl fmt::Display for Unread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unread::Compressed => f.write_str(bm::IMAGE_COMPRESSED),
            Unread::Cubin(e) => e.fmt(f),
            Unread::NotUtf8(e) => e.fmt(f),
            Unread::Ptx(e) => e.fmt(f),
            Unread::Kind(k) => f.write_str(&bm::image_kind(*k)),
        }
    }
}

/// What begen reads of a fatbin.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fatbin {
    /// Its images, in the container's order.
    pub(crate) images: Vec<Image>,
}

/// Why begen cannot read a container at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FatbinError {
    /// Not the fatbin magic number.
    NoMagic,
    /// A field at this byte offset lies past the end.
    Truncated(usize),
    /// The header's size of the images (bytes) is more than the file holds.
    Short(u64),
    /// The entry at this byte offset has a header of this many bytes (too small or too large).
    EntryHeader(usize, usize),
    /// The entry at this byte offset has a payload of this many bytes past the container.
    EntryPast(usize, u64),
}

impl fmt::Display for FatbinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = match *self {
            FatbinError::NoMagic => bm::fatbin_magic(MAGIC),
            FatbinError::Truncated(at) => bm::truncated_at(at),
            FatbinError::Short(size) => bm::fatbin_short(size),
            FatbinError::EntryHeader(at, header) => bm::fatbin_entry_header(at, header),
            FatbinError::EntryPast(at, payload) => bm::fatbin_entry_past(at, payload),
        };
        f.write_str(&bm::not_a_fatbin(&why))
    }
}

impl std::error::Error for FatbinError {}

fn field<const N: usize>(b: &[u8], at: usize) -> Result<[u8; N], FatbinError> {
    at.checked_add(N).and_then(|end| b.get(at..end)).and_then(|s| s.try_into().ok()).ok_or(FatbinError::Truncated(at))
}

fn u16_at(b: &[u8], at: usize) -> Result<u16, FatbinError> {
    field(b, at).map(u16::from_le_bytes)
}

fn u32_at(b: &[u8], at: usize) -> Result<u32, FatbinError> {
    field(b, at).map(u32::from_le_bytes)
}

fn u64_at(b: &[u8], at: usize) -> Result<u64, FatbinError> {
    field(b, at).map(u64::from_le_bytes)
}

impl Fatbin {
    /// Reads the images of a fatbin container.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Fatbin, FatbinError> {
        if u32_at(bytes, 0)? != MAGIC {
            return Err(FatbinError::NoMagic);
        }
        let header = u16_at(bytes, 6)? as usize;
        let size = u64_at(bytes, 8)?;
        let end = usize::try_from(size)
            .ok()
            .and_then(|s| header.checked_add(s))
            .filter(|&e| e <= bytes.len())
            .ok_or(FatbinError::Short(size))?;
        let mut images = Vec::new();
        let mut at = header;
        while at < end {
            let kind = u16_at(bytes, at)?;
            let entry_header = u32_at(bytes, at + 4)? as usize;
            let payload = u64_at(bytes, at + 8)?;
            let sm = u32_at(bytes, at + 28)?;
            let flags = u64_at(bytes, at + 40)?;
            let start = at
                .checked_add(entry_header)
                .filter(|_| entry_header >= 48)
                .ok_or(FatbinError::EntryHeader(at, entry_header))?;
            let stop = usize::try_from(payload)
                .ok()
                .and_then(|p| start.checked_add(p))
                .filter(|&s| s <= end)
                .ok_or(FatbinError::EntryPast(at, payload))?;
            let data = &bytes[start..stop];
            images.push(if flags & FLAG_COMPRESSED != 0 {
                Image::Unread { sm, why: Unread::Compressed }
            } else {
                match kind {
                    KIND_ELF => match Cubin::parse(data) {
                        Ok(c) => Image::Cubin(c),
                        Err(e) => Image::Unread { sm, why: Unread::Cubin(e) },
                    },
                    KIND_PTX => {
                        // PTX text, NUL-padded to the entry's size.
                        let text = data.split(|&c| c == 0).next().unwrap_or(&[]);
                        match std::str::from_utf8(text)
                            .map_err(Unread::NotUtf8)
                            .and_then(|t| ptx::entries(t).map_err(Unread::Ptx))
                        {
                            Ok(entries) => Image::Ptx(entries),
                            Err(why) => Image::Unread { sm, why },
                        }
                    }
                    other => Image::Unread { sm, why: Unread::Kind(other) },
                }
            });
            at = stop;
        }
        Ok(Fatbin { images })
    }

    /// The cubins it holds uncompressed.
    pub(crate) fn cubins(&self) -> impl Iterator<Item = &Cubin> {
        self.images.iter().filter_map(|i| if let Image::Cubin(c) = i { Some(c) } else { None })
    }

    /// The kernels of each PTX text it holds uncompressed.
    pub(crate) fn ptx(&self) -> impl Iterator<Item = &[PtxEntry]> {
        self.images.iter().filter_map(|i| if let Image::Ptx(p) = i { Some(p.as_slice()) } else { None })
    }

    /// The images begen could not read, as `sm_XY: why`.
    pub(crate) fn unread(&self) -> Vec<String> {
        self.images
            .iter()
            .filter_map(|i| {
                if let Image::Unread { sm, why } = i { Some(bm::unread_image(*sm, &why.to_string())) } else { None }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(kind: u16, sm: u32, flags: u64, payload: &[u8]) -> Vec<u8> {
        let mut e = Vec::new();
        e.extend(kind.to_le_bytes());
        e.extend(0x0101u16.to_le_bytes());
        e.extend(64u32.to_le_bytes());
        e.extend((payload.len() as u64).to_le_bytes());
        e.extend([0u8; 12]);
        e.extend(sm.to_le_bytes());
        e.extend([0u8; 8]);
        e.extend(flags.to_le_bytes());
        e.extend([0u8; 16]);
        assert_eq!(e.len(), 64);
        e.extend(payload);
        e
    }

    fn container(entries: &[Vec<u8>]) -> Vec<u8> {
        let body: Vec<u8> = entries.concat();
        let mut b = Vec::new();
        b.extend(MAGIC.to_le_bytes());
        b.extend(1u16.to_le_bytes());
        b.extend(16u16.to_le_bytes());
        b.extend((body.len() as u64).to_le_bytes());
        b.extend(body);
        b
    }

    const PTX: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
                       .visible .entry axpy(.param .u64 x, .param .f32 a)\n{\n\tret;\n}\n\0\0\0";

    #[test]
    fn reads_ptx_and_marks_what_it_cannot() {
        let b = container(&[entry(KIND_PTX, 90, 0x11, PTX.as_bytes()), entry(KIND_PTX, 80, 0x8011, b"(\xb5/\xfd")]);
        let f = Fatbin::parse(&b).unwrap();
        let names: Vec<&str> = f.ptx().flatten().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["axpy"]);
        assert_eq!(f.unread(), ["sm_80: its payload is compressed"]);
        let b = container(&[entry(7, 90, 0, b"x"), entry(KIND_ELF, 90, 0, b"not an elf")]);
        let f = Fatbin::parse(&b).unwrap();
        assert_eq!(f.unread().len(), 2);
        assert!(f.unread()[0].contains("unknown kind 7"), "{:?}", f.unread());
    }

    #[test]
    fn refuses_what_is_not_a_container() {
        assert!(Fatbin::parse(b"\x7fELF").is_err());
        let mut b = container(&[entry(KIND_PTX, 90, 0, PTX.as_bytes())]);
        b.truncate(b.len() - 5);
        assert!(matches!(Fatbin::parse(&b).unwrap_err(), FatbinError::Short(_)));
        assert!(Fatbin::parse(&b).unwrap_err().to_string().contains("the file is shorter"));
        // An entry whose payload runs past the container.
        let mut b = container(&[entry(KIND_PTX, 90, 0, PTX.as_bytes())]);
        b[16 + 8..16 + 16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(Fatbin::parse(&b).unwrap_err().to_string().contains("run past"));
        // Every prefix and every single-byte change is an answer, never a panic.
        let good = container(&[entry(KIND_PTX, 90, 0, PTX.as_bytes())]);
        for n in 0..good.len() {
            let _ = Fatbin::parse(&good[..n]);
            let mut bad = good.clone();
            bad[n] ^= 0xff;
            let _ = Fatbin::parse(&bad);
        }
    }
}
