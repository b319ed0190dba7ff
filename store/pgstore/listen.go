package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// channel is the one PostgreSQL notification channel weft's processes
// announce their writes on.
const channel = "weft_writes"

// Announce tells the other processes on the database of this write, at
// its commit (pg_notify is transactional: a write rolled back announces
// nothing).
func (t *Tx) Announce(payload []byte) error {
	_, err := t.tx.Exec(t.ctx, `SELECT pg_notify($1, $2)`, channel, string(payload))
	return t.fail(err)
}

// Listen calls fn with every announcement on the database, on a
// connection of its own (LISTEN), until ctx ends or the store closes.
// A connection lost is made again; fn(nil) then says announcements may
// have been missed meanwhile.
func (s *Store) Listen(ctx context.Context, fn func(payload []byte)) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-s.closed.Done():
			stop()
		case <-ctx.Done():
		}
	}()
	wait := 50 * time.Millisecond
	for first := true; ; first = false {
		if !first {
			fn(nil) // the break may have hidden writes
		}
		err := s.listenOnce(ctx, fn)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			wait = 50 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// listenOnce listens on one connection until it fails or ctx ends.
func (s *Store) listenOnce(ctx context.Context, fn func(payload []byte)) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.Background()) }()
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		return err
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		fn([]byte(n.Payload))
	}
}
