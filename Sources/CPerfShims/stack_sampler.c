// SIGPROF stack sampler and ELF symbolicator for the hang watchdog.
//
// Why SIGPROF: libdispatch worker threads block every other asynchronous signal, and a realtime
// signal would stay pending on them. Why backtrace(): it walks unwind tables, so it works on -O
// code without frame pointers. The handler only touches preallocated slots; symbolication runs
// later on the watchdog thread.
#define _GNU_SOURCE
#include "CPerfStackSampler.h"
#include "CPerfShims.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

// MARK: - Sampling

enum { SLOT_FREE = 0, SLOT_CLAIMED, SLOT_REQUESTED, SLOT_WRITING, SLOT_DONE };

#define PERF_SAMPLE_SLOTS 16

typedef struct {
    int state;
    int32_t tid;
    int count;
    void *frames[PERF_STACK_MAX_FRAMES];
} perf_sample_slot;

static perf_sample_slot perf_slots[PERF_SAMPLE_SLOTS];
static int perf_sampler_state;  // 0 not tried, 1 installed, 2 SIGPROF in use, 3 failed

// The kernel wrote the signal frame below the stack pointer, over memory AddressSanitizer may
// still hold as a dead frame's redzone (a main thread parked in sigsuspend after dispatchMain()):
// reading it is sound, so this one read is not instrumented.
__attribute__((no_sanitize("address"))) static uintptr_t perf_interrupted_pc(void *context) {
    ucontext_t *uc = (ucontext_t *)context;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.pc;
#else
    (void)uc;
    return 0;
#endif
}

int perf_trim_signal_frames(void **frames, int count, uintptr_t pc) {
    if (count <= 0) return 0;
    for (int f = 0; f < count; f++) {
        if ((uintptr_t)frames[f] == pc) {
            if (f > 0) memmove(frames, frames + f, (size_t)(count - f) * sizeof(void *));
            return count - f;
        }
    }
    if (pc != 0) {
        // The unwind never passed the interrupted instruction (a sanitizer's runtime delivering
        // the signal late, on its own frames): everything unwound is signal machinery or the
        // handler, so keep only the instruction itself, never Perf's own frames.
        frames[0] = (void *)pc;
        return 1;
    }
    // No register context on this architecture: drop the handler's own frame at least.
    if (count > 1) memmove(frames, frames + 1, (size_t)(count - 1) * sizeof(void *));
    return count - 1;
}

static void perf_sigprof_handler(int signo, siginfo_t *info, void *context) {
    (void)signo;
    (void)info;
    int saved_errno = errno;
    int32_t self = perf_gettid();
    for (int i = 0; i < PERF_SAMPLE_SLOTS; i++) {
        perf_sample_slot *slot = &perf_slots[i];
        int expected = SLOT_REQUESTED;
        if (__atomic_load_n(&slot->tid, __ATOMIC_ACQUIRE) != self) continue;
        if (!__atomic_compare_exchange_n(&slot->state, &expected, SLOT_WRITING, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
            continue;
        int count = backtrace(slot->frames, PERF_STACK_MAX_FRAMES);
        // Drop the handler's own frames and the sigreturn trampoline: keep from the
        // interrupted instruction on.
        slot->count = perf_trim_signal_frames(slot->frames, count, perf_interrupted_pc(context));
        __atomic_store_n(&slot->state, SLOT_DONE, __ATOMIC_RELEASE);
    }
    errno = saved_errno;
}

int perf_stack_sampler_install(void) {
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    if (perf_sampler_state == 0) {
        void *prime[4];
        (void)backtrace(prime, 4);
        struct sigaction previous;
        if (sigaction(SIGPROF, NULL, &previous) != 0) {
            perf_sampler_state = 3;
        } else if ((previous.sa_flags & SA_SIGINFO) ? previous.sa_sigaction != NULL
                                                     : (previous.sa_handler != SIG_DFL &&
                                                        previous.sa_handler != SIG_IGN)) {
            perf_sampler_state = 2;
        } else {
            struct sigaction action;
            memset(&action, 0, sizeof action);
            action.sa_sigaction = perf_sigprof_handler;
            action.sa_flags = SA_SIGINFO | SA_RESTART;
            sigemptyset(&action.sa_mask);
            perf_sampler_state = sigaction(SIGPROF, &action, NULL) == 0 ? 1 : 3;
        }
    }
    int state = perf_sampler_state;
    pthread_mutex_unlock(&lock);
    return state == 1 ? 0 : (state == 2 ? 1 : -1);
}

// Yield rather than nanosleep while waiting for the handler: timer slack turns a 20 us sleep
// into 50-100 us, longer than the whole sample.
static void perf_pause_briefly(void) { sched_yield(); }

int perf_stack_sample_thread(int32_t tid, uintptr_t *frames, int capacity, uint64_t timeout_ns) {
    if (__atomic_load_n(&perf_sampler_state, __ATOMIC_ACQUIRE) != 1) return -1;
    perf_sample_slot *slot = NULL;
    for (int i = 0; i < PERF_SAMPLE_SLOTS && slot == NULL; i++) {
        int expected = SLOT_FREE;
        if (__atomic_compare_exchange_n(&perf_slots[i].state, &expected, SLOT_CLAIMED, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            slot = &perf_slots[i];
    }
    if (slot == NULL) return -2;
    __atomic_store_n(&slot->tid, tid, __ATOMIC_RELEASE);
    slot->count = 0;
    __atomic_store_n(&slot->state, SLOT_REQUESTED, __ATOMIC_RELEASE);
    if (perf_tgkill((int32_t)getpid(), tid, SIGPROF) != 0) {
        __atomic_store_n(&slot->tid, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&slot->state, SLOT_FREE, __ATOMIC_RELEASE);
        return -3;
    }
    uint64_t deadline = perf_monotonic_ns() + timeout_ns;
    for (;;) {
        int state = __atomic_load_n(&slot->state, __ATOMIC_ACQUIRE);
        if (state == SLOT_DONE) break;
        if (state == SLOT_REQUESTED && perf_monotonic_ns() >= deadline) {
            int expected = SLOT_REQUESTED;
            // Withdraw the request; a handler that runs later finds nothing to fill.
            if (__atomic_compare_exchange_n(&slot->state, &expected, SLOT_CLAIMED, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                __atomic_store_n(&slot->tid, 0, __ATOMIC_RELEASE);
                __atomic_store_n(&slot->state, SLOT_FREE, __ATOMIC_RELEASE);
                return -4;
            }
            continue;
        }
        perf_pause_briefly();
    }
    int count = slot->count < capacity ? slot->count : capacity;
    for (int i = 0; i < count; i++) frames[i] = (uintptr_t)slot->frames[i];
    __atomic_store_n(&slot->tid, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&slot->state, SLOT_FREE, __ATOMIC_RELEASE);
    return count;
}

void perf_name_current_thread(const char *name) {
    char truncated[16];
    strncpy(truncated, name, sizeof truncated - 1);
    truncated[sizeof truncated - 1] = 0;
    pthread_setname_np(pthread_self(), truncated);
}

// MARK: - Symbolication

typedef struct {
    uintptr_t value;
    uintptr_t size;
    const char *name;
} perf_symbol;

typedef struct {
    char path[512];
    uintptr_t bias;
    perf_symbol *symbols;
    size_t count;
} perf_image;

#define PERF_MAX_IMAGES 128
static perf_image perf_images[PERF_MAX_IMAGES];
static size_t perf_image_count;
static pthread_mutex_t perf_image_lock = PTHREAD_MUTEX_INITIALIZER;

static int perf_symbol_compare(const void *a, const void *b) {
    uintptr_t x = ((const perf_symbol *)a)->value, y = ((const perf_symbol *)b)->value;
    return x < y ? -1 : (x > y ? 1 : 0);
}

// Loads the function symbols of one ELF file, sorted by address. The file stays mapped for the
// life of the process: symbol names point into it.
static void perf_load_symbols(perf_image *image) {
    const char *path = image->path[0] ? image->path : "/proc/self/exe";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
        close(fd);
        return;
    }
    const unsigned char *base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (base == MAP_FAILED) return;
    const Elf64_Ehdr *header = (const Elf64_Ehdr *)base;
    size_t size = (size_t)st.st_size;
    if (memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 || header->e_ident[EI_CLASS] != ELFCLASS64 ||
        header->e_shoff == 0 || header->e_shoff + (size_t)header->e_shnum * sizeof(Elf64_Shdr) > size) {
        munmap((void *)base, size);
        return;
    }
    const Elf64_Shdr *sections = (const Elf64_Shdr *)(base + header->e_shoff);
    const Elf64_Shdr *table = NULL;
    for (int pass = 0; pass < 2 && table == NULL; pass++) {
        for (int i = 0; i < header->e_shnum; i++) {
            if (sections[i].sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM)) table = &sections[i];
        }
    }
    if (table == NULL || table->sh_link >= header->e_shnum || table->sh_offset + table->sh_size > size) {
        munmap((void *)base, size);
        return;
    }
    const Elf64_Shdr *strings = &sections[table->sh_link];
    const Elf64_Sym *symbols = (const Elf64_Sym *)(base + table->sh_offset);
    size_t total = table->sh_size / sizeof(Elf64_Sym);
    perf_symbol *out = malloc(total * sizeof(perf_symbol));
    if (out == NULL) return;
    size_t count = 0;
    for (size_t i = 0; i < total; i++) {
        const Elf64_Sym *symbol = &symbols[i];
        if (ELF64_ST_TYPE(symbol->st_info) != STT_FUNC || symbol->st_shndx == SHN_UNDEF || symbol->st_value == 0)
            continue;
        if (symbol->st_name >= strings->sh_size) continue;
        out[count].value = (uintptr_t)symbol->st_value;
        out[count].size = (uintptr_t)symbol->st_size;
        out[count].name = (const char *)(base + strings->sh_offset + symbol->st_name);
        count++;
    }
    qsort(out, count, sizeof(perf_symbol), perf_symbol_compare);
    image->symbols = out;
    image->count = count;
}

typedef struct {
    uintptr_t address;
    const char *name;
    uintptr_t bias;
    int found;
} perf_find_image;

static int perf_find_image_callback(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    perf_find_image *query = data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD) continue;
        uintptr_t start = info->dlpi_addr + segment->p_vaddr;
        if (query->address >= start && query->address < start + segment->p_memsz) {
            query->name = info->dlpi_name;
            query->bias = info->dlpi_addr;
            query->found = 1;
            return 1;
        }
    }
    return 0;
}

static void perf_copy(char *out, size_t capacity, const char *in) {
    if (capacity == 0) return;
    size_t length = strlen(in);
    if (length >= capacity) length = capacity - 1;
    memcpy(out, in, length);
    out[length] = 0;
}

static perf_image *perf_cached_image_locked(const char *name, uintptr_t bias) {
    size_t count = __atomic_load_n(&perf_image_count, __ATOMIC_ACQUIRE);
    for (size_t i = 0; i < count; i++) {
        if (perf_images[i].bias == bias && strcmp(perf_images[i].path, name) == 0) return &perf_images[i];
    }
    return NULL;
}

static perf_image *perf_cached_image(const char *name, uintptr_t bias) {
    pthread_mutex_lock(&perf_image_lock);
    perf_image *image = perf_cached_image_locked(name, bias);
    pthread_mutex_unlock(&perf_image_lock);
    return image;
}

int perf_symbolicate(uintptr_t address, char *symbol, size_t symbol_capacity, char *image_out,
                     size_t image_capacity, uintptr_t *symbol_offset) {
    perf_copy(symbol, symbol_capacity, "");
    perf_copy(image_out, image_capacity, "");
    *symbol_offset = 0;
    perf_find_image query = {address, NULL, 0, 0};
    dl_iterate_phdr(perf_find_image_callback, &query);
    if (!query.found) return -1;
    const char *name = query.name ? query.name : "";
    perf_image *image = perf_cached_image(name, query.bias);
    if (image == NULL) {
        // Read the file's symbol table without the lock (it can take milliseconds); entries are
        // immutable once published, so readers need no lock either.
        perf_image loaded;
        memset(&loaded, 0, sizeof loaded);
        perf_copy(loaded.path, sizeof loaded.path, name);
        loaded.bias = query.bias;
        perf_load_symbols(&loaded);
        pthread_mutex_lock(&perf_image_lock);
        image = perf_cached_image_locked(name, query.bias);
        if (image == NULL && perf_image_count < PERF_MAX_IMAGES) {
            perf_images[perf_image_count] = loaded;
            image = &perf_images[perf_image_count];
            __atomic_store_n(&perf_image_count, perf_image_count + 1, __ATOMIC_RELEASE);
        } else {
            free(loaded.symbols);  // another thread published it first (its mapping stays)
        }
        pthread_mutex_unlock(&perf_image_lock);
    }
    int result = 0;
    if (image != NULL) {
        if (image->path[0]) {
            perf_copy(image_out, image_capacity, image->path);
        } else {
            char self[512];
            ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
            self[length > 0 ? length : 0] = 0;
            perf_copy(image_out, image_capacity, self);
        }
        uintptr_t relative = address - image->bias;
        size_t low = 0, high = image->count;
        while (low < high) {
            size_t mid = (low + high) / 2;
            if (image->symbols[mid].value <= relative) low = mid + 1;
            else high = mid;
        }
        if (low > 0) {
            const perf_symbol *match = &image->symbols[low - 1];
            if (match->size == 0 || relative < match->value + match->size) {
                perf_copy(symbol, symbol_capacity, match->name);
                *symbol_offset = relative - match->value;
                result = 1;
            }
        }
    }
    if (result == 0) {
        Dl_info info;
        if (dladdr((void *)address, &info) != 0 && info.dli_sname != NULL) {
            perf_copy(symbol, symbol_capacity, info.dli_sname);
            *symbol_offset = address - (uintptr_t)info.dli_saddr;
            result = 1;
        }
    }
    return result;
}
