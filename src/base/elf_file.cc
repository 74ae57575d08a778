#include "base/elf_file.h"

#include <elf.h>

#include <cstdint>
#include <cstring>

namespace gpuscope {

namespace {

#if defined(__x86_64__)
constexpr uint16_t kMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kMachine = EM_AARCH64;
#else
#error "gpuscope: list this architecture's ELF machine (elf.h EM_*)"
#endif

// Whether [offset, offset + size) lies within `total` bytes (no overflow).
bool Within(uint64_t offset, uint64_t size, uint64_t total) {
  return offset <= total && size <= total - offset;
}

// Notes longer than this are not read (a build id note is 36 bytes).
constexpr uint64_t kMaxNotes = 64 * 1024;

template <typename T>
bool ReadStruct(const ReadAt& read, uint64_t offset, T* out) {
  return read(offset, sizeof(T), out);
}

template <typename T>
bool CopyAt(std::string_view bytes, uint64_t offset, T* out) {
  if (!Within(offset, sizeof(T), bytes.size())) return false;
  std::memcpy(out, bytes.data() + offset, sizeof(T));
  return true;
}

Status Truncated(const std::string& what, uint64_t size) {
  return Status::InvalidArgument("truncated: its " + what + " ends past its " +
                                 std::to_string(size) + " bytes");
}

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char byte : bytes) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 0xf];
  }
  return hex;
}

// The GNU build id among `notes` (a PT_NOTE segment, padded to `align`), "" if none.
std::string BuildIdInNotes(std::string_view notes, uint64_t align) {
  const uint64_t pad = align == 8 ? 8 : 4;
  auto padded = [pad](uint64_t n) { return (n + pad - 1) / pad * pad; };
  uint64_t at = 0;
  Elf64_Nhdr note;
  while (CopyAt(notes, at, &note)) {
    const uint64_t name_at = at + sizeof(note);
    const uint64_t desc_at = name_at + padded(note.n_namesz);
    if (!Within(desc_at, note.n_descsz, notes.size())) return "";
    if (note.n_type == NT_GNU_BUILD_ID && note.n_descsz > 0 &&
        notes.substr(name_at, note.n_namesz) == std::string_view("GNU", 4)) {
      return Hex(notes.substr(desc_at, note.n_descsz));
    }
    at = desc_at + padded(note.n_descsz);
  }
  return "";
}

// Every section's bytes lie within the file. Their table is the file's last bytes, so this is
// where most cuts show.
Status CheckSections(uint64_t size, const ReadAt& read, const Elf64_Ehdr& header) {
  if (header.e_shoff == 0) return Status::Ok();  // no section table
  uint64_t count = header.e_shnum;
  Elf64_Shdr section;
  if (count == 0 && ReadStruct(read, header.e_shoff, &section)) count = section.sh_size;
  if (header.e_shentsize != sizeof(Elf64_Shdr) ||
      !Within(header.e_shoff, count * sizeof(Elf64_Shdr), size)) {
    return Truncated("section header table", size);
  }
  for (uint64_t i = 0; i < count; ++i) {
    if (!ReadStruct(read, header.e_shoff + i * sizeof(section), &section)) {
      return Truncated("section header table", size);
    }
    if (section.sh_type != SHT_NOBITS && !Within(section.sh_offset, section.sh_size, size)) {
      return Truncated("section " + std::to_string(i), size);
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> ElfBuildId(uint64_t size, const ReadAt& read) {
  Elf64_Ehdr header;
  if (!ReadStruct(read, 0, &header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    return Status::InvalidArgument("not an ELF file (" + std::to_string(size) + " bytes)");
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB ||
      header.e_machine != kMachine || header.e_type != ET_DYN) {
    return Status::InvalidArgument("not a shared object of this machine");
  }
  if (header.e_phentsize != sizeof(Elf64_Phdr) ||
      !Within(header.e_phoff, uint64_t{header.e_phnum} * sizeof(Elf64_Phdr), size)) {
    return Truncated("program header table", size);
  }
  std::string build_id;
  for (uint64_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    if (!ReadStruct(read, header.e_phoff + i * sizeof(segment), &segment)) {
      return Truncated("program header table", size);
    }
    if (!Within(segment.p_offset, segment.p_filesz, size)) {
      return Truncated("segment " + std::to_string(i), size);
    }
    if (segment.p_type == PT_NOTE && build_id.empty() && segment.p_filesz <= kMaxNotes) {
      std::string notes(segment.p_filesz, '\0');
      if (!read(segment.p_offset, notes.size(), notes.data())) {
        return Truncated("segment " + std::to_string(i), size);
      }
      build_id = BuildIdInNotes(notes, segment.p_align);
    }
  }
  if (Status sections = CheckSections(size, read, header); !sections.ok()) return sections;
  if (build_id.empty()) return Status::InvalidArgument("it carries no GNU build id");
  return build_id;
}

Result<std::string> ElfBuildId(std::string_view image) {
  return ElfBuildId(image.size(), [image](uint64_t offset, uint64_t size, void* out) {
    if (!Within(offset, size, image.size())) return false;
    std::memcpy(out, image.data() + offset, size);
    return true;
  });
}

std::string MappedBuildId(const void* phdrs, int phnum, const char* base) {
  const auto* segments = static_cast<const Elf64_Phdr*>(phdrs);
  for (int i = 0; i < phnum; ++i) {
    const Elf64_Phdr& segment = segments[i];
    if (segment.p_type != PT_NOTE) continue;
    std::string id =
        BuildIdInNotes(std::string_view(base + segment.p_vaddr, segment.p_filesz), segment.p_align);
    if (!id.empty()) return id;
  }
  return "";
}

}  // namespace gpuscope
