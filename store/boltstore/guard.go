package boltstore

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"

	"weft/store"
	"weft/store/boltfile"
)

var (
	// ErrDamaged is wrapped by every error about a file whose pages
	// cannot be read as a database: truncated, overwritten, bit-flipped.
	// Such an error is a *DamagedError.
	ErrDamaged = store.ErrDamaged
	// ErrCorrupt is wrapped by every error about one record (a message,
	// an operation, a session's record) that cannot be decoded while the
	// file around it can. Such an error is a *CorruptError.
	ErrCorrupt = store.ErrCorrupt
)

// DamagedError says which file is damaged, what was found wrong, and what
// to do about it.
type DamagedError struct {
	Path   string
	Detail string // what was found, e.g. "it is 8192 bytes long but its pages reach 20480"
	// panicked marks damage found by a panic or fault inside bbolt, after
	// which a write transaction's in-memory state cannot be trusted.
	panicked bool
}

func damaged(path, detail string) *DamagedError {
	return &DamagedError{Path: path, Detail: detail}
}

// Error says what is damaged and how to look at it and rescue it.
func (e *DamagedError) Error() string {
	p := shellQuote(e.Path)
	return fmt.Sprintf("%s is damaged (%s): run weft check --db %s to see what is wrong, and weft salvage --db %s OUT to copy what can be read into a new file OUT", e.Path, e.Detail, p, p)
}

// Is makes errors.Is(err, ErrDamaged) true.
func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

// CorruptError names a record that cannot be decoded: the file, the
// session it belongs to (if any) and the record.
type CorruptError struct {
	Path    string
	Session string // "" for a record outside any session
	Record  string // e.g. "message 12", "op #3", "session record"
	Err     error  // what is wrong with it
}

// Error names the file, session and record, and what is wrong.
func (e *CorruptError) Error() string {
	var b strings.Builder
	b.WriteString(e.Path + ": ")
	if e.Session != "" {
		fmt.Fprintf(&b, "session %q: ", e.Session)
	}
	fmt.Fprintf(&b, "%s: corrupt record: %v (weft check --db %s lists every damaged record)", e.Record, e.Err, shellQuote(e.Path))
	return b.String()
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Unwrap returns what is wrong with the record.
func (e *CorruptError) Unwrap() error { return e.Err }

// CorruptSession is the session the record belongs to (store.Corrupt).
func (e *CorruptError) CorruptSession() string { return e.Session }

// corruptf makes a CorruptError for a record of session id (or of none).
func (t *Tx) corruptf(id, record string, format string, args ...any) error {
	return &CorruptError{Path: t.path, Session: id, Record: record, Err: fmt.Errorf(format, args...)}
}

// shellQuote quotes a path for a command line when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// guard runs fn, which reads the file through bbolt, so that nothing a
// damaged file does can take the process down: a fault on the memory map
// (a truncated file, a page number pointing outside it) becomes a panic
// (debug.SetPanicOnFault, for this goroutine while fn runs), and a panic
// raised in bbolt or in the store's own decoding becomes a *DamagedError.
// A panic raised elsewhere (a bug in a caller's function) goes on.
func guard(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		detail, ok := fromFile(r)
		if !ok {
			panic(r)
		}
		err = &DamagedError{Path: path, Detail: detail, panicked: true}
	}()
	return fn()
}

// fromFile reports whether a recovered panic came from reading the file,
// and describes it. It must be called from the deferred function that
// recovered, so the panicking frames are still on the stack.
func fromFile(r any) (string, bool) {
	if f, ok := r.(interface{ Addr() uintptr }); ok {
		// Only a fault at a non-nil address carries one: with
		// SetPanicOnFault on, that is a read of the memory map.
		return fmt.Sprintf("reading it faulted at address %#x: a page lies outside the file", f.Addr()), true
	}
	pcs := make([]uintptr, 64)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	panicking := false
	for {
		f, more := frames.Next()
		switch {
		case !panicking:
			panicking = f.Function == "runtime.gopanic"
		case strings.HasPrefix(f.Function, "runtime."):
			// runtime.panicIndex and friends: the panic's own frames.
		default:
			// The frame that panicked.
			inBolt := strings.HasPrefix(f.Function, "go.etcd.io/bbolt")
			inStore := strings.HasPrefix(f.Function, "weft/store.") && !strings.HasSuffix(f.File, "_test.go")
			return panicDetail(r, inBolt), inBolt || inStore
		}
		if !more {
			return "", false
		}
	}
}

// panicDetail says in words what a panic raised while reading the file
// found. The Go runtime's own text ("slice bounds out of range
// [::3031742324]") names a length read from the damaged bytes, which
// tells the user nothing; bbolt's own panics name what it found
// inconsistent ("page 12 already freed"), so those are kept.
func panicDetail(r any, inBolt bool) string {
	var re runtime.Error
	switch {
	case errors.As(asError(r), &re) && inBolt:
		return "a page's lengths or offsets reach outside it"
	case errors.As(asError(r), &re):
		return "a record's lengths reach outside it"
	case inBolt:
		return fmt.Sprintf("bbolt found it inconsistent: %v", r)
	default:
		return fmt.Sprintf("a record cannot be read: %v", r)
	}
}

// asError is r as an error, or nil when it is not one.
func asError(r any) error {
	err, _ := r.(error)
	return err
}

// cutOff says what a walk found that bbolt's reads must not follow, or
// "".
func cutOff(t boltfile.Tree) string {
	switch {
	case !t.Cut():
		return ""
	case len(t.Problems) == 1:
		return t.Problems[0]
	}
	return t.Problems[0] + "; and other damaged pages"
}

// allocStep is how much a file grows by when it needs room.
const allocStep = 256 << 10

// initialMap is the size of the first map of a file opened to write.
const initialMap = 1 << 30

// mapSize is the map a file is opened with: initialMap for writing,
// what the file holds (bbolt's own) for reading only, which never
// remaps.
func mapSize(readOnly bool) int {
	if readOnly || strconv.IntSize == 32 || runtime.GOOS == "windows" {
		// Nor on a 32-bit machine, of 2 GB of address space, nor on
		// Windows, where bbolt grows the file to what it maps.
		return 0
	}
	return initialMap
}

// openBolt opens the file with bbolt, under guard: bbolt reads the
// freelist while opening a file for writing, and a damaged one panics.
// Then, holding the lock, it looks at the file's header pages and
// freelist (boltfile.Inspect), and at the branch pages bbolt's reads
// descend through (boltfile.WalkBranches), so that a damaged file is
// refused before anything reads or writes it: bbolt would follow a
// branch page pointing round a cycle for ever, or until the stack
// overflows, which no guard catches. It returns bbolt's database and the
// file under it (which bbolt closes).
func openBolt(path string, readOnly bool, timeout time.Duration) (*bolt.DB, *os.File, error) {
	var f *os.File
	opts := &bolt.Options{
		Timeout:  timeout,
		ReadOnly: readOnly,
		// bbolt maps the file, and when a write needs pages past the
		// map it maps it again, larger; before it does, it copies every
		// key and value the write holds onto the heap. A write of one
		// 8 MB message into a small file remapped two or three times,
		// each copying the 8 MB. A map of a gigabyte (address space,
		// not memory: only the pages read are resident) is remapped
		// once the file passes it, as etcd maps its files.
		InitialMmapSize: mapSize(readOnly),
		OpenFile: func(name string, flag int, mode os.FileMode) (*os.File, error) {
			var err error
			f, err = os.OpenFile(name, flag, mode)
			return f, err
		},
	}
	var db *bolt.DB
	err := guard(path, func() error {
		var err error
		db, err = bolt.Open(path, 0o600, opts)
		if errors.Is(err, syscall.ENOMEM) && opts.InitialMmapSize > 0 {
			// A process whose address space is limited (ulimit -v)
			// cannot map a gigabyte: the file is mapped as bbolt maps
			// it by itself, and remapped as it grows.
			opts.InitialMmapSize = 0
			db, err = bolt.Open(path, 0o600, opts)
		}
		return err
	})
	var d *DamagedError
	if errors.As(err, &d) {
		if f != nil {
			// bbolt panicked half-way: say what is wrong if the header
			// pages and freelist tell, and let go of the file and its
			// lock.
			if info, err := f.Stat(); err == nil {
				rep := boltfile.Inspect(f, info.Size())
				if rep.Fatal != "" {
					d.Detail = rep.Fatal
				} else if rep.WriteFatal != "" {
					d.Detail = rep.WriteFatal
				}
			}
			_ = f.Close()
		}
		return nil, nil, d
	}
	if err != nil {
		return nil, nil, openError(path, err)
	}
	// bbolt grows a file mapped past AllocSize (16 MB by default) in
	// steps of AllocSize, and a file opened to write is mapped a
	// gigabyte ahead: a step of 256 KB keeps the file near its data (at
	// most 256 KB past it), at the cost of a truncate and an fsync per
	// step of growth, which imports do not show
	// (BenchmarkImportManySessions in ops/ingest: 46-53k sessions/s
	// with either step).
	db.AllocSize = allocStep
	if info, err := f.Stat(); err == nil && info.Size() > 0 {
		rep := boltfile.Inspect(f, info.Size())
		fatal := rep.Fatal
		if fatal == "" && !readOnly {
			fatal = rep.WriteFatal
		}
		if fatal == "" {
			fatal = cutOff(boltfile.WalkBranches(f, rep))
		}
		if fatal != "" {
			_ = db.Close()
			return nil, nil, damaged(path, fatal)
		}
	}
	return db, f, nil
}
