package ingest

import (
	"fmt"
	"slices"

	"weft/formats"
	"weft/internal/english"
	"weft/model"
	"weft/ops"
	"weft/store"
)

// Writing an import's batches: a thread's batch as one write of the
// service, and small new threads grouped, many sessions to a transaction.

// groupable reports whether a thread that has ended can be written with
// others in one transaction: a new session, read whole in one batch,
// with no digests or operations to make once its messages are stored.
func (im *Import) groupable(th *importThread) bool {
	return th.sid == "" && im.opts.Session == "" && !th.keepID && th.appended == 0 && th.report.Added == 0 &&
		len(th.digests) == 0 && len(th.ops) == 0 && len(th.batch) > 0 && len(th.batch) < im.batchSize
}

// addToGroup queues a small thread, writing the group when it is full.
func (im *Import) addToGroup(th *importThread) error {
	key := sourceKey(th.info)
	if th.info.Key != "" && im.groupKeys[key] {
		// The same source twice in a file: the first must be stored
		// for the second to find it.
		if err := im.flushGroup(); err != nil {
			return err
		}
	}
	if im.groupKeys == nil {
		im.groupKeys = map[string]bool{}
	}
	im.groupKeys[key] = true
	im.group = append(im.group, th)
	im.groupMsgs += len(th.batch)
	if len(im.group) >= groupThreads || im.groupMsgs >= im.batchSize {
		return im.flushGroup()
	}
	return nil
}

// flushGroup starts writing the queued small threads as one write of the
// service (every session made in one transaction), once the previous
// write is done. Their reports are recorded when it finishes.
func (im *Import) flushGroup() error {
	if len(im.group) == 0 {
		return nil
	}
	group := im.group
	im.group, im.groupMsgs, im.groupKeys = nil, 0, nil
	for _, th := range group {
		countTokens(th.batch)
	}
	if err := im.wait(); err != nil {
		return err
	}
	done := make(chan error, 1)
	im.inflight, im.inflightRead, im.written = done, im.read, group
	go func() {
		reqs := make([]*ops.WriteReq, len(group))
		after := make([]func(model.Session), len(group))
		for i, th := range group {
			reqs[i], after[i] = im.batchWrite(th, th.batch, nil)
		}
		if err := im.s.CommitAll(im.ctx, reqs); err != nil {
			done <- fmt.Errorf("importing %s: %w", english.Count(len(group), "conversation"), err)
			return
		}
		for i, th := range group {
			after[i](reqs[i].Session())
			th.batch = nil
		}
		done <- nil
	}()
	return nil
}

// write stores a batch of the thread through the service's write path,
// creating the session with the first batch; pre, if not nil, is the
// batch prepared.
func (im *Import) write(th *importThread, batch []formats.Message, pre *preparedBatch) error {
	r, after := im.batchWrite(th, batch, pre)
	if err := im.s.CommitAll(im.ctx, []*ops.WriteReq{r}); err != nil {
		return fmt.Errorf("importing into %q: %w", th.title, err)
	}
	after(r.Session())
	return nil
}

// batchWrite is a batch of the thread as a write of the service, and
// what to report of it once it is written (given the session's record).
// pre, if not nil, is the batch prepared (prepare).
func (im *Import) batchWrite(th *importThread, batch []formats.Message, pre *preparedBatch) (*ops.WriteReq, func(model.Session)) {
	s := im.s
	var added, skipped int
	var unplaced []string // keys of messages that belong before stored ones
	var changed []string  // keys of stored messages the file has otherwise
	lastOld := false      // the batch holds a message already stored
	created := th.sid == ""
	prepare := func(tx store.Tx, c *ops.Thread, next *model.Session) (*ops.Change, error) {
		// A message new to the session that comes before one already
		// there belongs between stored messages, which are only ever
		// appended to: it is not added out of order, but reported.
		var old []bool
		var keys []importKey // to record: the new messages', and those old ones lack
		lastLocal := -1
		if !created && !th.fresh(next) {
			old = make([]bool, len(batch))
			for i := range batch {
				m := &batch[i]
				seq, via, ok, err := th.find(tx, next.ID, m)
				if err != nil {
					return nil, err
				}
				if !ok {
					continue
				}
				old[i], lastLocal = true, i
				missing, err := th.missingKeys(tx, next.ID, m, seq, via)
				if err != nil {
					return nil, err
				}
				keys = append(keys, missing...)
				// Stored messages never change: one the file now has
				// otherwise (a block that was broken, a reply that was
				// still being written) keeps its first version. Told by
				// its tokens, which the heads hold, so no message is read.
				heads, ok := im.heads[next.ID]
				if !ok {
					if heads, err = tx.Heads(next.ID); err != nil {
						return nil, err
					}
					im.heads[next.ID] = heads
				}
				if seq >= 1 && seq <= uint64(len(heads)) && !sameTokens(heads[seq-1], *m) {
					changed = append(changed, m.Key)
				}
			}
		}
		lastOld = lastLocal >= 0
		if created && th.keepID {
			if err := th.checkKeepID(tx, batch); err != nil {
				return nil, err
			}
			if !th.keepID {
				next.ID = s.NewID(im.now)
			}
		}
		msgs := make([]model.Message, 0, len(batch))
		var picked []int // of pre's records, those of msgs
		for i := range batch {
			m := &batch[i]
			if old != nil && old[i] {
				skipped++
				continue
			}
			if i < lastLocal {
				unplaced = append(unplaced, m.Key)
				continue
			}
			nm := m.NewMessage
			if nm.CreatedAt.IsZero() {
				nm.CreatedAt = im.now // the source has no times: when it was imported
			}
			seq := uint64(next.MessageCount + len(msgs) + 1)
			msgs = append(msgs, ops.StoredMessage(seq, nm, im.now, m.Digest))
			picked = append(picked, i)
			for i := range len(m.Aliases) + 1 {
				keys = append(keys, importKey{th.keyOf(m, i), seq})
			}
			next.Tokens += msgs[len(msgs)-1].Tokens
		}
		added = len(msgs)
		id := next.ID
		var sources []string
		if !th.sourcesDone && im.opts.Session == "" && th.info.Key != "" {
			if created {
				sources = th.sources
			} else {
				sources = th.pendingSources(tx, id)
			}
		}
		if added == 0 && len(keys) == 0 && len(sources) == 0 {
			return nil, nil
		}
		record := func(tx store.Tx) error {
			for _, src := range sources {
				if err := tx.PutSourceSession(src, id); err != nil {
					return err
				}
			}
			return putKeys(tx, id, keys)
		}
		if added == 0 {
			// Only what the session is known by: recorded beside the
			// thread, which stays as it was (its version too).
			return &ops.Change{
				What: fmt.Sprintf("import keys of %s recorded", english.Count(len(keys), "message")), Aside: true, Reload: true,
				Event: ops.Event{Kind: ops.EventAppended}, Store: record,
			}, nil
		}
		next.MessageCount += added
		return &ops.Change{
			What:   fmt.Sprintf("%s imported", english.Count(added, "message")),
			Reload: true,
			Event:  ops.Event{Kind: ops.EventAppended},
			Store: func(tx store.Tx) error {
				var err error
				switch {
				case pre == nil:
					err = tx.AppendMessages(id, msgs)
				case len(picked) == pre.enc.Len():
					err = tx.AppendEncoded(id, msgs, pre.enc)
				default:
					err = tx.AppendEncoded(id, msgs, pre.enc.Pick(picked))
				}
				if err != nil {
					return err
				}
				return record(tx)
			},
		}, nil
	}
	r := &ops.WriteReq{Created: created, Prepare: prepare}
	if created {
		info := model.Session{
			ID: s.NewID(im.now), Title: th.title, CreatedAt: im.now,
			Source: string(th.info.Source), ActiveTags: slices.Clone(th.info.ActiveTags),
		}
		if th.keepID && im.opts.Session == "" {
			info.ID = th.info.Key
		}
		if !th.info.CreatedAt.IsZero() {
			info.CreatedAt = th.info.CreatedAt.UTC()
		}
		r.Find = func(ops.Locked) (*ops.Thread, error) { return &ops.Thread{Info: info}, nil }
	} else {
		sid := th.sid
		r.Find = func(l ops.Locked) (*ops.Thread, error) { return l.Record(sid) }
	}
	return r, func(info model.Session) {
		im.report(th, info, created, added, skipped, unplaced, changed, lastOld)
	}
}

// fresh reports whether every message the session holds is one this
// import added from this thread, so that none of a new batch's can be
// among them: a thread's keys are unique within it (formats.Message),
// and a format whose keys name messages apart from their thread (a
// resumed Claude Code session repeats its records) is always looked up.
// The writer then reads no import key per message.
func (th *importThread) fresh(next *model.Session) bool {
	return th.report.Created && !th.info.Source.GlobalKeys() && next.MessageCount == th.report.Added
}

// report adds what a written batch did to the thread's report.
func (im *Import) report(th *importThread, info model.Session, created bool, added, skipped int, unplaced, changed []string, lastOld bool) {
	if created && added > 0 {
		th.sid = info.ID
		th.report.Created = true
		switch {
		case th.raced:
			th.note("the file's session ID %s was taken here while this import ran (by another import of the file), so this one is %s", th.taken, th.sid)
		case th.taken != "":
			th.note("the file's session ID %s is another session's here (made at another time), so this one is %s; importing the file again finds it", th.taken, th.sid)
		case th.renumbered:
			th.note("messages of the file are missing (lines that could not be read), so its messages are numbered otherwise here and the session takes a new ID, %s, not the file's %s; importing the file again finds it", th.sid, th.info.Key)
		}
	}
	th.sourcesDone = th.sourcesDone || th.sid != ""
	th.report.Added += added
	th.report.Skipped += skipped
	if len(unplaced) > 0 {
		th.report.NotPlaced += len(unplaced)
		th.note("%s of the file %s before messages already in the session, which are only ever appended to, so %s not added (the first is %s); import the file into a new session to have %s in order",
			english.Count(len(unplaced), "message"), importWord(len(unplaced) == 1, "belongs", "belong"), importWord(len(unplaced) == 1, "it was", "they were"), unplaced[0], importWord(len(unplaced) == 1, "it", "them"))
	}
	if len(changed) > 0 {
		th.report.Changed += len(changed)
		th.note("%s of the file %s from the version imported before (the first is %s); stored messages are never changed, so the session keeps the earlier %s; import the file into a new session to have it as it is now",
			english.Count(len(changed), "message"), importWord(len(changed) == 1, "differs", "differ"), changed[0], importWord(len(changed) == 1, "version", "versions"))
	}
	if lastOld && th.appended > 0 {
		th.note("%s added by an earlier batch of this import come before messages already in the session: they stand after them, out of the file's order", english.Count(th.appended, "message"))
		th.appended = 0
	}
	th.appended += added
}
