// Package follow watches a growing conversation file (a Claude Code
// session, a Codex rollout: any format whose records are appended a line
// at a time) and hands out its settled part each time it grows: whole
// lines only, less what may still change (a response being written).
// Reading the settled part again from the start is what an import of
// the file as it was at that moment reads, and import keys make the
// messages already imported count for nothing, so each update is
// imported whole.
package follow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"weft/formats"
	"weft/formats/claudecode"
	"weft/formats/codex"
)

// Update is the settled part of a followed file.
type Update struct {
	// Format is the file's format, as given or detected.
	Format formats.Format
	// Data is the file's settled part, from its start: whole lines, none
	// that may still change. It is only valid during the call.
	Data []byte
	// Restarted says the file started again (it was cut short, replaced
	// or removed and made again) since the last update: Data is its new
	// content.
	Restarted bool
}

// Options configure Watch; zero values take the defaults.
type Options struct {
	// Format is the file's format; empty: detected from its first lines.
	Format formats.Format
	// Debounce is how long a file's events wait for more before it is
	// read (a writer's lines come in bursts); default 100 ms.
	Debounce time.Duration
	// Settle is how long a file must be quiet before what its format
	// holds back (Pending) is handed out too; default 3 s.
	Settle time.Duration
	// Poll is how often the file is looked at without an event (on a
	// file system whose events do not come); default 1 s, and a quarter
	// of that when the file cannot be watched.
	Poll time.Duration
	// PollOnly looks at the file every Poll only, without file events.
	PollOnly bool
	// Notify, if set, is told what the follower has to say: the file is
	// not there yet, was cut short, replaced or removed, cannot be
	// watched, is of a format it cannot tell; and fn's errors.
	Notify func(string)
}

// DefaultSettle is how long a file must be quiet before what may still
// change in it is taken as it is.
const DefaultSettle = 3 * time.Second

func (o Options) withDefaults() Options {
	if o.Debounce <= 0 {
		o.Debounce = 100 * time.Millisecond
	}
	if o.Settle <= 0 {
		o.Settle = DefaultSettle
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Notify == nil {
		o.Notify = func(string) {}
	}
	return o
}

// Pending is, for a format, how much of a growing file's whole lines can
// be imported now (see claudecode.Pending); nil: all of them.
func Pending(f formats.Format) func([]byte) int {
	switch f {
	case formats.ClaudeCode:
		return claudecode.Pending
	case formats.Codex:
		return codex.Pending
	}
	return nil
}

// Watch follows file until ctx ends, calling fn with the file's settled
// part as it is at the start and each time it grows. The file may be
// missing at first (it is waited for), be cut short or replaced (it is
// read again from its start) or go away (it is waited for again); each
// is said through Notify. An error from fn is said too, and the same
// update is offered again at the next look. Watch returns nil when ctx
// ends.
func Watch(ctx context.Context, file string, opts Options, fn func(Update) error) error {
	opts = opts.withDefaults()
	path, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	f := &follower{path: path, name: file, opts: opts, fn: fn, format: opts.Format, last: map[string]bool{}}
	events, closeWatcher := f.watchEvents()
	defer closeWatcher()
	poll := opts.Poll
	if events == nil && !opts.PollOnly {
		poll = max(poll/4, 10*time.Millisecond)
	}
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	timer := time.NewTimer(0) // the first look, at once
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-events:
			timer.Reset(opts.Debounce)
		case <-ticker.C:
			if wait := f.look(); wait > 0 {
				timer.Reset(wait)
			}
		case <-timer.C:
			if wait := f.look(); wait > 0 {
				timer.Reset(wait)
			}
		}
	}
}

// follower is what Watch knows of its file.
type follower struct {
	path, name string
	opts       Options
	fn         func(Update) error
	format     formats.Format

	present bool
	missing bool // said that the file is not there
	info    fs.FileInfo
	buf     []byte // the file's bytes read so far
	grown   time.Time
	done    int  // how much of buf fn took
	restart bool // the next update is of a file that started again
	// last: what was said, so a state is said once, not at every look.
	last map[string]bool
}

// say tells Notify s, once until something else is said.
func (f *follower) say(s string) {
	if f.last[s] {
		return
	}
	clear(f.last)
	f.last[s] = true
	f.opts.Notify(f.name + ": " + s)
}

// watchEvents watches the file's folder (a file replaced or made again
// is seen there, where a watch on the file itself would end with it) and
// gives a channel that has a value when the file may have changed; nil
// when it cannot watch, and Watch polls more often.
func (f *follower) watchEvents() (<-chan struct{}, func()) {
	if f.opts.PollOnly {
		return nil, func() {}
	}
	w, err := fsnotify.NewWatcher()
	if err == nil {
		if err = w.Add(filepath.Dir(f.path)); err != nil {
			_ = w.Close()
		}
	}
	if err != nil {
		f.opts.Notify(fmt.Sprintf("%s: cannot watch for changes (%v): looking at it every %v instead", f.name, err, max(f.opts.Poll/4, 10*time.Millisecond)))
		return nil, func() {}
	}
	ch := make(chan struct{}, 1)
	quit := make(chan struct{})
	go func() {
		for {
			select {
			case <-quit:
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Clean(ev.Name) != f.path {
					continue
				}
				select {
				case ch <- struct{}{}:
				default:
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				// A lost event (an overflow) is made up for by the
				// next poll.
			}
		}
	}()
	return ch, func() { close(quit); _ = w.Close() }
}

// look reads what the file gained, hands out its settled part if that
// grew, and says how long to wait before looking again for what it held
// back (0: no need).
func (f *follower) look() time.Duration {
	info, err := os.Stat(f.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if f.present {
			f.say("removed or renamed: waiting for it to come back")
			f.reset()
		} else if !f.missing {
			f.say("does not exist yet: waiting for it")
		}
		f.present, f.missing = false, true
		return 0
	case err != nil:
		f.say(err.Error())
		return 0
	case info.IsDir():
		f.say("is a directory, not a file: name the files in it")
		return 0
	}
	switch {
	case f.present && !os.SameFile(f.info, info):
		f.say("replaced by a new file: reading it from its start")
		f.reset()
	case info.Size() < int64(len(f.buf)):
		f.say(fmt.Sprintf("cut short (%d bytes, was %d): reading it again from its start", info.Size(), len(f.buf)))
		f.reset()
	case info.Size() > int64(len(f.buf)) && !f.same():
		f.say("written over: reading it again from its start")
		f.reset()
	}
	f.present, f.missing, f.info = true, false, info
	if info.Size() > int64(len(f.buf)) {
		if err := f.read(info.Size()); err != nil {
			f.say("reading it: " + err.Error())
			return 0
		}
	}
	complete := bytes.LastIndexByte(f.buf, '\n') + 1
	if complete == 0 {
		return 0
	}
	if f.format == "" {
		format, err := formats.Detect(f.buf[:min(complete, formats.DetectSize)])
		if err != nil {
			f.say(err.Error() + " (waiting for more of it)")
			return 0
		}
		f.format = format
	}
	settled, wait := complete, time.Duration(0)
	if pending := Pending(f.format); pending != nil {
		if quiet := time.Since(f.grown); quiet < f.opts.Settle {
			if settled = pending(f.buf[:complete]); settled < complete {
				wait = f.opts.Settle - quiet
			}
		}
	}
	if settled <= f.done && !(f.restart && settled > 0) {
		return wait
	}
	if err := f.fn(Update{Format: f.format, Data: f.buf[:settled], Restarted: f.restart}); err != nil {
		f.say(err.Error())
		return wait
	}
	clear(f.last) // the next trouble is news again
	f.done, f.restart = settled, false
	return wait
}

// reset forgets what was read: the file starts again.
func (f *follower) reset() {
	f.buf, f.done, f.restart = f.buf[:0], 0, true
}

// tailCheck is how much of what was read last is read again before
// what a file gained, to tell a file that grew from one written over.
const tailCheck = 64

// same reports whether the file still ends, where the last read
// stopped, with what that read gave (a file that grew); false when it
// was written over.
func (f *follower) same() bool {
	n := min(len(f.buf), tailCheck)
	if n == 0 {
		return true
	}
	file, err := os.Open(f.path)
	if err != nil {
		return true // the read that follows says why
	}
	defer func() { _ = file.Close() }()
	got := make([]byte, n)
	if _, err := file.ReadAt(got, int64(len(f.buf)-n)); err != nil {
		return true
	}
	return bytes.Equal(got, f.buf[len(f.buf)-n:])
}

// read reads the file from where the last read stopped up to size.
func (f *follower) read(size int64) error {
	file, err := os.Open(f.path)
	if err != nil {
		return err
	}
	defer func() { _ = file.Close() }()
	from := int64(len(f.buf))
	f.buf = append(f.buf, make([]byte, size-from)...)
	n, err := file.ReadAt(f.buf[from:], from)
	f.buf = f.buf[:from+int64(n)]
	if n > 0 {
		f.grown = time.Now()
	}
	if errors.Is(err, io.EOF) {
		err = nil // cut short since the stat: the next look sees it
	}
	return err
}
