// Package ingest imports conversation files into sessions: what a
// format's reader emits is written in batches, each through the
// Service's one write path, so an interrupted import resumes where it
// stopped and a re-import (weft import --follow) adds only what is new.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"weft/internal/english"
	"weft/internal/tokens"
	"weft/ops/progress"

	"weft/formats"
	"weft/formats/weftjsonl"
	"weft/model"
	"weft/ops"
	"weft/store"
)

// Options configure an import.
type Options struct {
	// Session, if set, imports every thread of the file into this session
	// (an ID, ID prefix or title), creating it with this title if none
	// matches. Otherwise each source thread has a session of its own,
	// found again on re-import by its source key, and a session of weft's
	// own format by its ID too, wherever it moved (identity.go).
	Session string
	// Progress, if set, is called after each batch with the number of
	// messages read so far.
	Progress func(read int)
}

// ImportedSession reports what an import did to one session.
type ImportedSession struct {
	SessionID string `json:"session_id"`
	Title     string `json:"title"`
	Created   bool   `json:"created"`
	Added     int    `json:"added"`
	Skipped   int    `json:"skipped"` // already imported before
	Ops       int    `json:"operations"`
	// OpsDropped counts the file's operations not imported because
	// nothing they act on was (Notes names them).
	OpsDropped int `json:"operations_dropped,omitempty"`
	// NotPlaced counts new messages not added because they come before
	// messages the session already has (Notes says so).
	NotPlaced int `json:"not_placed,omitempty"`
	// Changed counts messages already imported that the file now has
	// otherwise; the session keeps them as they were (Notes says so).
	Changed int `json:"changed,omitempty"`
	// Notes says what was not imported as the file has it: operations
	// with targets missing, digests over missing messages.
	Notes []string `json:"notes,omitempty"`
}

// maxNotes bounds the notes of one thread; the rest are counted.
const maxNotes = 20

// Import writes what an importer reads into sessions. It implements
// formats.Emitter. Messages are written in batches, each one transaction;
// a batch records the import keys of its messages, so an interrupted
// import resumes where it stopped when run again, and a re-import adds
// nothing.
type Import struct {
	s    *ops.Service
	ctx  context.Context
	opts Options
	now  time.Time

	cur      *importThread
	read     int
	Sessions []ImportedSession
	reported map[string]int // session ID -> its entry in Sessions

	// A batch is written while the reader parses the next one: at most
	// one write is in flight, and it finishes before anything else
	// touches the store or the thread's state.
	inflight     chan error
	inflightRead int
	// written: the threads of the write in flight whose reports are to
	// be recorded once it is done (a group of small threads).
	written []*importThread

	// group: small new threads read whole, waiting to be written
	// together, many sessions in one transaction; groupMsgs counts
	// their messages, groupKeys their source keys.
	group     []*importThread
	groupMsgs int
	groupKeys map[string]bool

	// batchSize is how many messages one write takes (importBatch;
	// tests make it small).
	batchSize int

	// heads: a session's heads as they were when this import first
	// found one of its messages stored, read once (by the writer).
	heads map[string][]model.Head
}

type importThread struct {
	info    formats.ThreadInfo
	sid     string // empty until the session exists
	title   string
	batch   []formats.Message
	digests []pendingDigest
	ops     []model.Op
	report  ImportedSession
	// legacy: the thread's own session, which may have been imported
	// before keys were qualified with the thread (see key), so a key
	// is also looked for as the format gave it.
	legacy bool
	// self: the session is the weft file's own (identity.go):
	// the file's key <id>/m<n> names its message n, for n up to native,
	// its message count when the import began.
	self   bool
	native uint64
	// keepID: a new session takes the weft file's session ID; taken:
	// the session here that has that ID and is another one.
	keepID bool
	taken  string
	raced  bool // taken by another import of the file, while this one ran
	// renumbered: the ID was not kept as the file's messages would not
	// have their own numbers here (a line could not be read).
	renumbered bool
	// sources: the source keys to record as leading to the session,
	// with its first batch (sourcesDone once written).
	sources     []string
	sourcesDone bool
	// moreNotes counts the notes past maxNotes.
	moreNotes int
	// appended counts the messages this import added to the session.
	appended int
}

// note adds a line to the thread's report.
func (th *importThread) note(format string, args ...any) {
	if len(th.report.Notes) < maxNotes {
		th.report.Notes = append(th.report.Notes, fmt.Sprintf(format, args...))
	} else {
		th.moreNotes++
	}
}

// key is the import key a message of the thread is stored under: the
// format's key, qualified with the thread's source key where the
// format's keys only identify a message within its thread, so the
// threads of one file imported into one session keep apart.
func (th *importThread) key(k string) string {
	if th.info.Source.GlobalKeys() {
		return k
	}
	return sourceKey(th.info) + "\x00" + k
}

type pendingDigest struct{ from, to, summary string }

// importBatch is how many messages one transaction writes: at 10,000
// a batch being written and the next being prepared keep the heap of a
// 1M-message import under 80 MB, and it runs faster than at 20,000
// (BenchmarkImportOpenAIJSONL1M).
const importBatch = 10000

// groupThreads is how many small threads one transaction writes.
const groupThreads = 1000

// New starts an import into svc's sessions; pass it to a formats reader.
func New(ctx context.Context, svc *ops.Service, opts Options) *Import {
	if p := progress.From(ctx); p != nil {
		// The file's length in messages is not known until its end: the
		// reports count what was read.
		own := opts.Progress
		opts.Progress = func(read int) {
			if own != nil {
				own(read)
			}
			p(read, 0, fmt.Sprintf("%d messages read", read))
		}
	}
	return &Import{s: svc, ctx: ctx, opts: opts, now: svc.Clock(), batchSize: importBatch, heads: map[string][]model.Head{}}
}

var _ formats.Emitter = (*Import)(nil)

// Begin starts a thread.
func (im *Import) Begin(t formats.ThreadInfo) error {
	if err := im.wait(); err != nil {
		return err
	}
	th := &importThread{info: t, title: strings.TrimSpace(t.Title)}
	if th.title == "" {
		th.title = fmt.Sprintf("%s import %s", t.Source, im.now.Format("2006-01-02 15:04"))
	}
	if im.opts.Session != "" {
		id, err := im.s.Resolve(im.opts.Session)
		switch {
		case err == nil:
			th.sid = id
			if err := im.s.Store().View(th.selfCheck); err != nil {
				return err
			}
		case isNotFound(err):
			th.title = im.opts.Session
		default:
			return err
		}
	} else if t.Key != "" {
		if err := im.s.Store().View(th.identify); err != nil {
			return err
		}
	}
	im.cur = th
	return nil
}

func sourceKey(t formats.ThreadInfo) string { return string(t.Source) + ":" + t.Key }

func isNotFound(err error) bool {
	e, ok := err.(*ops.Error)
	return ok && e.Kind == ops.ErrNotFound
}

// Message queues a message, writing a batch when it is full.
func (im *Import) Message(m formats.Message) error {
	if im.cur == nil {
		return fmt.Errorf("import: message outside a thread")
	}
	im.cur.batch = append(im.cur.batch, m)
	im.read++
	if len(im.cur.batch) >= im.batchSize {
		return im.flush()
	}
	return nil
}

// Digest queues a digest over messages of the current thread; digests
// are made once the thread's messages are written.
func (im *Import) Digest(from, to, summary string) error {
	if im.cur == nil {
		return fmt.Errorf("import: digest outside a thread")
	}
	if strings.TrimSpace(summary) == "" {
		return nil // a compaction without a summary collapses into nothing useful
	}
	im.cur.digests = append(im.cur.digests, pendingDigest{from, to, summary})
	return nil
}

// Op queues an operation of weft's own format.
func (im *Import) Op(op model.Op) error {
	if im.cur == nil {
		return fmt.Errorf("import: operation outside a thread")
	}
	im.cur.ops = append(im.cur.ops, op)
	return nil
}

// End writes the rest of the thread and its operations.
func (im *Import) End() error {
	th := im.cur
	if th == nil {
		return fmt.Errorf("import: End without Begin")
	}
	if im.groupable(th) {
		im.cur = nil
		return im.addToGroup(th)
	}
	if err := im.flushGroup(); err != nil { // in the file's order
		return err
	}
	err := im.flush()
	if err == nil {
		err = im.wait()
	}
	if err == nil && th.sid != "" && (len(th.digests) > 0 || len(th.ops) > 0) {
		err = im.writeOps(th)
	}
	if th.sid != "" {
		im.record(th) // what was written, also when the rest failed
	}
	im.cur = nil
	return err
}

// record adds a thread's report to the session it went into: the
// threads of a file imported into one session make one entry.
func (im *Import) record(th *importThread) {
	r := th.report
	r.SessionID, r.Title = th.sid, th.title
	if th.moreNotes > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d more notes like these", th.moreNotes))
	}
	if i, ok := im.reported[r.SessionID]; ok {
		s := &im.Sessions[i]
		s.Created = s.Created || r.Created
		s.Added += r.Added
		s.Skipped += r.Skipped
		s.Ops += r.Ops
		s.OpsDropped += r.OpsDropped
		s.NotPlaced += r.NotPlaced
		s.Changed += r.Changed
		s.Notes = append(s.Notes, r.Notes...)
		return
	}
	if im.reported == nil {
		im.reported = map[string]int{}
	}
	im.reported[r.SessionID] = len(im.Sessions)
	im.Sessions = append(im.Sessions, r)
}

// Close writes the small threads still waiting and waits for the write
// in flight, if any. Readers call End for every thread, and Close once
// they are done (or stop early, on an I/O error).
func (im *Import) Close() error {
	err := im.flushGroup()
	return errors.Join(err, im.wait())
}

// wait finishes the write in flight, records the reports of the threads
// it finished and reports progress.
func (im *Import) wait() error {
	if im.inflight == nil {
		return nil
	}
	err := <-im.inflight
	im.inflight = nil
	for _, th := range im.written {
		if th.sid != "" {
			im.record(th)
		}
	}
	im.written = nil
	if err == nil && im.opts.Progress != nil {
		im.opts.Progress(im.inflightRead)
	}
	return err
}

// flush prepares the queued messages (tokens, digests, records) and
// starts writing them, once the previous batch is written.
func (im *Import) flush() error {
	th := im.cur
	if len(th.batch) == 0 {
		return nil
	}
	batch := th.batch
	th.batch = make([]formats.Message, 0, min(im.batchSize, 2*len(batch)))
	pre := im.prepare(batch)
	if pre == nil {
		countTokens(batch)
	}
	if err := im.wait(); err != nil {
		return err
	}
	done := make(chan error, 1)
	im.inflight, im.inflightRead = done, im.read
	go func() { done <- im.write(th, batch, pre) }()
	return nil
}

// sameTokens tells whether a stored message's head counts the tokens the
// file's message has now. Messages stored before counts included parts
// counted their content only: either count matches.
func sameTokens(h model.Head, m formats.Message) bool {
	if int(h.Tokens) == m.Tokens {
		return true
	}
	return len(m.Parts) > 0 && int(h.Tokens) == tokens.Count(m.Content)
}

// countTokens counts the batch's tokens on every core, and digests the
// messages whose reader did not: the work per message that needs no
// store is done here, not in the one writer.
func countTokens(batch []formats.Message) {
	ops.CountEach(len(batch), func(i int) *model.NewMessage {
		m := &batch[i]
		if m.Digest == "" {
			m.Digest = model.ContentDigest(m.Role, m.Content)
		}
		return &m.NewMessage
	})
}

// writeOps records the thread's digests (from compactions in the source)
// and its weft operations, skipping those an earlier import made.
func (im *Import) writeOps(th *importThread) error {
	s := im.s
	author := ops.AuthorFrom(im.ctx)
	if author == "operator" {
		author = "import"
	}
	var made []model.Op
	_, err := s.Write(im.ctx, th.sid, nil, func(tx store.Tx, t *ops.Thread, next *model.Session) (*ops.Change, error) {
		var add []model.Op
		err := func() error {
			seqOf := func(key string) (uint64, error) {
				seq, ok, err := th.lookup(tx, t.Info.ID, key)
				if err == nil && !ok {
					err = fmt.Errorf("%w %q", errNoKey, key)
				}
				return seq, err
			}
			for _, d := range th.digests {
				from, err := seqOf(d.from)
				var to uint64
				if err == nil {
					to, err = seqOf(d.to)
				}
				if errors.Is(err, errNoKey) {
					th.note("a compaction's digest %q was not made: %v", importSnippet(d.summary, 60), err)
					continue
				}
				if err != nil {
					return err
				}
				if to < from {
					from, to = to, from
				}
				targets := make([]model.ItemID, 0, to-from+1)
				for seq := from; seq <= to; seq++ {
					targets = append(targets, model.MessageID(seq))
				}
				if slices.ContainsFunc(t.Ops, func(o model.Op) bool {
					return o.Type == model.OpDigest && o.Payload.Summary == d.summary && slices.Equal(o.Targets, targets)
				}) {
					continue // imported before
				}
				add = append(add, model.Op{
					ID: s.NewID(im.now), Type: model.OpDigest, Targets: targets, Active: true,
					Payload:   model.OpPayload{Summary: d.summary, SummaryTokens: tokens.Count(d.summary)},
					CreatedAt: im.now, Author: author,
				})
			}
			return im.remapOps(tx, t, th, &add)
		}()
		if err != nil || len(add) == 0 {
			return nil, err
		}
		next.OpCount += len(add)
		made = add
		what := fmt.Sprintf("%s imported", english.Count(len(add), "operation"))
		return &ops.Change{
			What: what,
			Store: func(tx store.Tx) error {
				for i := range add {
					add[i].Version = next.Version
					if err := tx.PutOp(t.Info.ID, add[i]); err != nil {
						return err
					}
				}
				return nil
			},
			Apply: func(t *ops.Thread) { t.Ops = append(t.Ops, add...); t.InvalidateView() },
			Event: ops.Event{Kind: ops.EventOpCreated},
		}, nil
	})
	th.report.Ops += len(made)
	return err
}

var errNoKey = errors.New("no imported message has key")

// remapOps adds the thread's weft operations to out: stored-message
// targets are mapped to the seqs their messages got here, operations
// already in this file are skipped, and an ID another session uses gets a
// new one (with synthetic targets renamed to match). A target whose
// message was not imported (a broken line) is left out, so the operation
// applies to the rest, as an operation does whose targets are partly
// gone; one left with no target is not imported. The thread's notes say
// which.
func (im *Import) remapOps(tx store.Tx, t *ops.Thread, th *importThread, out *[]model.Op) error {
	renamed := map[string]string{}
	dropped := map[string]bool{} // operations of the file not imported
	// mapID maps an item ID of the file to this session's; false when
	// it names nothing imported.
	mapID := func(id model.ItemID) (model.ItemID, bool, error) {
		if _, ok := id.Seq(); ok {
			seq, found, err := th.lookup(tx, t.Info.ID, weftjsonl.Key(th.info.Key, id))
			if err != nil || !found {
				return "", false, err
			}
			return model.MessageID(seq), true, nil
		}
		if op, k, ok := id.Synthetic(); ok {
			if dropped[op] {
				return "", false, nil
			}
			if n, ok := renamed[op]; ok {
				return model.SyntheticID(n, k), true, nil
			}
		}
		return id, true, nil
	}
	for _, op := range th.ops {
		if sid, err := tx.OpSession(op.ID); err == nil {
			if sid == t.Info.ID {
				continue // imported before
			}
			renamed[op.ID] = im.s.NewID(im.now)
		}
		o := op
		if n, ok := renamed[op.ID]; ok {
			o.ID = n
		}
		o.Targets = make([]model.ItemID, 0, len(op.Targets))
		var missing []model.ItemID
		for _, id := range op.Targets {
			m, ok, err := mapID(id)
			if err != nil {
				return err
			}
			if !ok {
				missing = append(missing, id)
				continue
			}
			o.Targets = append(o.Targets, m)
		}
		what := fmt.Sprintf("operation %s (%s)", op.ID, op.Type)
		if len(op.Targets) > 0 && len(o.Targets) == 0 {
			dropped[op.ID] = true
			th.report.OpsDropped++
			th.note("%s not imported: none of its targets (%s) was imported", what, importIDList(missing))
			continue
		}
		var notes []string // said once the operation is known to be new here
		if len(missing) > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d of its %d targets (%s) were not imported; it applies to the rest", what, len(missing), len(op.Targets), importIDList(missing)))
		}
		if op.Anchor != "" {
			m, ok, err := mapID(op.Anchor)
			if err != nil {
				return err
			}
			if !ok {
				if m, ok, err = im.anchorBefore(tx, t, th, op.Anchor); err != nil {
					return err
				}
				if !ok {
					dropped[op.ID] = true
					th.report.OpsDropped++
					th.note("%s not imported: the item it inserts after (%s) was not imported", what, op.Anchor)
					continue
				}
				where := "after " + string(m)
				if m == "" {
					where = "at the start"
				}
				notes = append(notes, fmt.Sprintf("%s: the message it inserts after (%s) was not imported; it inserts %s, where the nearest earlier message is", what, op.Anchor, where))
			}
			o.Anchor = m
		}
		// The same operation made here under another ID (a compaction's
		// digest, made by each file's import of the source) is there.
		if i := slices.IndexFunc(t.Ops, func(x model.Op) bool { return sameOp(&x, &o) }); i >= 0 {
			renamed[op.ID] = t.Ops[i].ID
			continue
		}
		for _, n := range notes {
			th.note("%s", n)
		}
		*out = append(*out, o)
	}
	return nil
}

// anchorBefore stands in for an insert's anchor that was not imported:
// the nearest earlier stored message of the file that was, or the start
// (""). A synthetic anchor has no such stand-in (false).
func (im *Import) anchorBefore(tx store.Tx, t *ops.Thread, th *importThread, anchor model.ItemID) (model.ItemID, bool, error) {
	seq, ok := anchor.Seq()
	if !ok {
		return "", false, nil
	}
	for s, tries := seq-1, 0; s > 0 && tries < 1000; s, tries = s-1, tries+1 {
		here, found, err := th.lookup(tx, t.Info.ID, weftjsonl.Key(th.info.Key, model.MessageID(s)))
		if err != nil {
			return "", false, err
		}
		if found {
			return model.MessageID(here), true, nil
		}
	}
	return "", true, nil
}

func importWord(one bool, a, b string) string {
	if one {
		return a
	}
	return b
}

// importIDList names a few item IDs.
func importIDList(ids []model.ItemID) string {
	const shown = 5
	var b strings.Builder
	for i, id := range ids[:min(len(ids), shown)] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(id))
	}
	if len(ids) > shown {
		fmt.Fprintf(&b, " and %d more", len(ids)-shown)
	}
	return b.String()
}

// importSnippet is s on one line, cut to n runes at most.
func importSnippet(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
