//! The kernels of a cubin (a CUDA ELF image) and, per kernel, the
//! parameter table the driver launches it with (`.nv.info.<kernel>`'s
//! `KPARAM_INFO` records: ordinal, offset, size).
//!
//! That table is the ground truth for argument packing: begen checks that a
//! symbol a manifest names is an entry of the image, and that the
//! parameters it derives (from a cuTile symbol, or a `c` signature) have
//! exactly the kernel's offsets and sizes.

use std::fmt;

use crate::diag::messages::binary as bm;

/// One parameter as the cubin records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct KernelParam {
    /// Position in the parameter list.
    pub(crate) ordinal: u16,
    /// Byte offset in the parameter buffer.
    pub(crate) offset: u16,
    /// Size in bytes.
    pub(crate) size: u16,
}

/// One kernel (entry function) of a cubin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Kernel {
    /// Its symbol.
    pub(crate) name: String,
    /// Its parameters, by ordinal.
    pub(crate) params: Vec<KernelParam>,
    /// The parameter buffer's size (`CBANK_PARAM_SIZE`), when recorded.
    pub(crate) param_size: Option<u16>,
    /// The block shape the kernel must be launched with (`REQNTID`: PTX
    /// `.reqntid`, `__launch_bounds__` with exact dims; cuTile sets it), when
    /// recorded: a launch with another block fails.
    pub(crate) required_block: Option<[u32; 3]>,
}

/// What begen reads of a cubin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cubin {
    /// The `sm_XY` the image is for, as XY.
    pub(crate) sm: u32,
    /// Its kernels, in symbol-table order.
    pub(crate) kernels: Vec<Kernel>,
}

/// Why begen cannot read an image (its text is the catalogue's: [`ElfError::why`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ElfError {
    /// No `\x7fELF` at the start.
    NoMagic,
    /// Not ELF64, little-endian.
    Not64,
    /// An ELF for another machine (its `e_machine`).
    Machine(u16),
    /// A field at this byte offset lies past the end.
    Truncated(usize),
    /// A section (offset, length) outside the file.
    SectionOutOfFile(usize, usize),
    /// No section-name string table.
    NoSectionNames,
    /// A `.nv.info` record cut short.
    TruncatedInfo,
    /// A `.nv.info` record of an unknown format, in this kernel's section.
    InfoFormat(u8, String),
    /// A symbol table whose entries (`sh_entsize`) are shorter than an ELF64 symbol.
    SymbolSize(u64),
    /// Section headers (`e_shentsize`) shorter than an ELF64 section header.
    SectionHeaderSize(u16),
}

impl ElfError {
    /// What is wrong, without the "not a readable cubin" prefix.
    pub(crate) fn why(&self) -> String {
        match self {
            ElfError::NoMagic => bm::ELF_NO_MAGIC.to_string(),
            ElfError::Not64 => bm::ELF_NOT_64.to_string(),
            ElfError::Machine(m) => bm::elf_machine(*m, EM_CUDA),
            ElfError::Truncated(at) => bm::truncated_at(*at),
            ElfError::SectionOutOfFile(at, len) => bm::elf_section_out_of_file(*at, *len),
            ElfError::NoSectionNames => bm::ELF_NO_SECTION_NAMES.to_string(),
            ElfError::TruncatedInfo => bm::ELF_TRUNCATED_INFO.to_string(),
            ElfError::InfoFormat(format, kernel) => bm::elf_info_format(*format, kernel),
            ElfError::SymbolSize(size) => bm::elf_symbol_size(*size, SYM_SIZE),
            ElfError::SectionHeaderSize(size) => bm::elf_section_header_size(*size, SHDR_SIZE),
        }
    }
}

impl fmt::Display for ElfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&bm::not_a_cubin(&self.why()))
    }
}

impl std::error::Error for ElfError {}

const EM_CUDA: u16 = 190;
const SHT_SYMTAB: u32 = 2;
const STT_FUNC: u8 = 2;
/// `st_other` bit of a kernel entry in CUDA ELF.
const STO_CUDA_ENTRY: u8 = 0x10;
const EIATTR_KPARAM_INFO: u8 = 0x17;
const EIATTR_CBANK_PARAM_SIZE: u8 = 0x19;
const EIATTR_REQNTID: u8 = 0x10;
/// Bytes of an ELF64 symbol (`Elf64_Sym`) and section header (`Elf64_Shdr`).
const SYM_SIZE: u64 = 24;
const SHDR_SIZE: u16 = 64;

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn get<const N: usize>(&self, at: usize) -> Result<[u8; N], ElfError> {
        at.checked_add(N)
            .and_then(|end| self.0.get(at..end))
            .and_then(|s| s.try_into().ok())
            .ok_or(ElfError::Truncated(at))
    }
    fn u16(&self, at: usize) -> Result<u16, ElfError> {
        Ok(u16::from_le_bytes(self.get(at)?))
    }
    fn u32(&self, at: usize) -> Result<u32, ElfError> {
        Ok(u32::from_le_bytes(self.get(at)?))
    }
    fn u64(&self, at: usize) -> Result<u64, ElfError> {
        Ok(u64::from_le_bytes(self.get(at)?))
    }
    fn slice(&self, at: u64, len: u64) -> Result<&[u8], ElfError> {
        let (at, len) = (at as usize, len as usize);
        self.0.get(at..at.saturating_add(len)).ok_or(ElfError::SectionOutOfFile(at, len))
    }
}

struct Section<'a> {
    name: &'a str,
    kind: u32,
    data: &'a [u8],
    link: u32,
    entsize: u64,
}

fn cstr(table: &[u8], at: u32) -> &str {
    let rest = table.get(at as usize..).unwrap_or(&[]);
    let end = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
    std::str::from_utf8(&rest[..end]).unwrap_or("")
}

impl Cubin {
    /// Reads a cubin's kernels and their parameter tables.
    pub(crate) fn parse(image: &[u8]) -> Result<Cubin, ElfError> {
        let b = Bytes(image);
        if image.get(..4) != Some(b"\x7fELF".as_slice()) {
            return Err(ElfError::NoMagic);
        }
        if image.get(4..6) != Some([2u8, 1].as_slice()) {
            return Err(ElfError::Not64);
        }
        if b.u16(0x12)? != EM_CUDA {
            return Err(ElfError::Machine(b.u16(0x12)?));
        }
        // The architecture is in e_flags: bits 8-15 from ELF ABI version 8
        // (CUDA 12.8 on), bits 0-7 before.
        let flags = b.u32(0x30)?;
        let sm = if image[8] >= 8 { (flags >> 8) & 0xff } else { flags & 0xff };
        let (shoff, shentsize, shnum, shstrndx) = (b.u64(0x28)?, b.u16(0x3a)?, b.u16(0x3c)?, b.u16(0x3e)?);
        if shnum > 0 && shentsize < SHDR_SIZE {
            return Err(ElfError::SectionHeaderSize(shentsize));
        }
        let mut raw = Vec::with_capacity(shnum as usize);
        for i in 0..u64::from(shnum) {
            // Each header lies whole inside the file, or the image is truncated.
            let at = i
                .checked_mul(u64::from(shentsize))
                .and_then(|o| o.checked_add(shoff))
                .and_then(|at| usize::try_from(at).ok())
                .ok_or(ElfError::Truncated(image.len()))?;
            if at.checked_add(usize::from(SHDR_SIZE)).is_none_or(|end| end > image.len()) {
                return Err(ElfError::Truncated(at));
            }
            raw.push((b.u32(at)?, b.u32(at + 4)?, b.u64(at + 24)?, b.u64(at + 32)?, b.u32(at + 40)?, b.u64(at + 56)?));
        }
        let strtab = raw.get(shstrndx as usize).ok_or(ElfError::NoSectionNames)?;
        let names = b.slice(strtab.2, strtab.3)?;
        let mut sections = Vec::with_capacity(raw.len());
        for &(name, kind, offset, size, link, entsize) in &raw {
            // NOBITS sections have no bytes in the file.
            let data = if kind == 8 { &[][..] } else { b.slice(offset, size)? };
            sections.push(Section { name: cstr(names, name), kind, data, link, entsize });
        }
        let mut kernels = Vec::new();
        for symtab in sections.iter().filter(|s| s.kind == SHT_SYMTAB) {
            let strings = sections.get(symtab.link as usize).map_or(&[][..], |s| s.data);
            // Zero means the ELF64 size; anything shorter would put st_info past the entry.
            let entsize = match symtab.entsize {
                0 => SYM_SIZE,
                n if n < SYM_SIZE => return Err(ElfError::SymbolSize(n)),
                n => n,
            };
            let entsize = usize::try_from(entsize).map_err(|_| ElfError::SymbolSize(entsize))?;
            for sym in symtab.data.chunks_exact(entsize) {
                let s = Bytes(sym);
                let (info, other) = (s.get::<1>(4)?[0], s.get::<1>(5)?[0]);
                if info & 0xf == STT_FUNC && other & STO_CUDA_ENTRY != 0 {
                    kernels.push(Kernel {
                        name: cstr(strings, s.u32(0)?).to_string(),
                        params: vec![],
                        param_size: None,
                        required_block: None,
                    });
                }
            }
        }
        // By name, the first of each (a crafted image may hold many kernels and sections).
        let mut infos = std::collections::HashMap::new();
        for s in &sections {
            if let Some(kernel) = s.name.strip_prefix(".nv.info.") {
                infos.entry(kernel).or_insert(s.data);
            }
        }
        for k in &mut kernels {
            if let Some(info) = infos.get(k.name.as_str()) {
                read_info(info, k)?;
            }
        }
        Ok(Cubin { sm, kernels })
    }

    /// The kernel of a symbol.
    pub(crate) fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

/// Walks the `.nv.info.<kernel>` attribute records.
fn read_info(data: &[u8], k: &mut Kernel) -> Result<(), ElfError> {
    let b = Bytes(data);
    let mut at = 0;
    while at < data.len() {
        let (format, attr) = (data[at], *data.get(at + 1).ok_or(ElfError::TruncatedInfo)?);
        match format {
            // EIFMT_NVAL: no value, but the record still has its two
            // (zero) value bytes (sm_80 cubins carry such records).
            1 => at += 4,
            // EIFMT_BVAL, EIFMT_HVAL: a value in the record's next two bytes.
            2 | 3 => {
                if attr == EIATTR_CBANK_PARAM_SIZE {
                    k.param_size = Some(b.u16(at + 2)?);
                }
                at += 4;
            }
            // EIFMT_SVAL: a u16 length, then that many bytes.
            4 => {
                let len = b.u16(at + 2)? as usize;
                if attr == EIATTR_REQNTID && len == 12 {
                    k.required_block = Some([b.u32(at + 4)?, b.u32(at + 8)?, b.u32(at + 12)?]);
                }
                if attr == EIATTR_KPARAM_INFO {
                    let flags = b.u32(at + 12)?;
                    k.params.push(KernelParam {
                        ordinal: b.u16(at + 8)?,
                        offset: b.u16(at + 10)?,
                        size: ((flags >> 18) & 0x3fff) as u16,
                    });
                }
                at += 4 + len;
            }
            f => return Err(ElfError::InfoFormat(f, k.name.clone())),
        }
    }
    k.params.sort_by_key(|p| p.ordinal);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_what_is_not_a_cubin() {
        assert_eq!(Cubin::parse(b"\x7fELF"), Err(ElfError::Not64));
        assert!(Cubin::parse(b"hello").is_err());
        let mut header = vec![0u8; 64];
        header[..6].copy_from_slice(b"\x7fELF\x02\x01");
        header[0x12] = 62; // x86-64
        assert_eq!(Cubin::parse(&header).unwrap_err(), ElfError::Machine(62));
        assert_eq!(
            Cubin::parse(&header).unwrap_err().to_string(),
            "not a readable cubin: machine 62 is not CUDA (190)"
        );
    }

    #[test]
    fn info_records() {
        // KPARAM_INFO for ordinal 1 at offset 8, 4 bytes; then CBANK_PARAM_SIZE 12; a NVAL (four
        // bytes, as nvcc's sm_80 cubins have them: tests/binary.rs fatbins_list_their_kernels).
        let mut data = vec![0x04, 0x17, 12, 0, 0, 0, 0, 0, 1, 0, 8, 0];
        data.extend_from_slice(&(4u32 << 18 | 0xf000).to_le_bytes());
        data.extend_from_slice(&[0x03, 0x19, 12, 0, 0x01, 0x50, 0, 0]);
        data.extend_from_slice(&[0x04, 0x10, 12, 0, 128, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0]);
        let mut k = Kernel { name: "k".into(), params: vec![], param_size: None, required_block: None };
        read_info(&data, &mut k).unwrap();
        assert_eq!(k.params, [KernelParam { ordinal: 1, offset: 8, size: 4 }]);
        assert_eq!(k.param_size, Some(12));
        assert_eq!(k.required_block, Some([128, 1, 2]));
        assert!(read_info(&[0x09, 0x00], &mut k).is_err());
    }
}
