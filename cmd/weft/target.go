package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"time"

	"weft/ops"
	"weft/ops/mcpserver"
	"weft/ops/tools"
	"weft/store"
)

// access is what a command does with the database file.
type access int

const (
	// reading never changes the file: it is opened read-only, and a
	// file that is not there is not made.
	reading access = iota
	// writing may make the file (and its folder).
	writing
)

// target is where a command does its work: on the file, opened here, or
// through the running weft that holds it. Every command goes through
// the same calls either way, so its output is the same.
type target interface {
	// invoke runs a tool with its own argument type, filling out (a
	// pointer to its result type).
	invoke(ctx context.Context, tool *tools.Tool, args, out any) error
	// call runs a tool on JSON arguments and gives its JSON result.
	call(ctx context.Context, tool *tools.Tool, args json.RawMessage) (json.RawMessage, error)
	outline(ctx context.Context, ref string) (mcpserver.Outline, error)
	export(ctx context.Context, w io.Writer, args mcpserver.ExportArgs) ([]string, error)
	// importFile imports f, drawing bar as it goes; the error is a
	// request the running weft refused or could not answer.
	importFile(ctx context.Context, f io.Reader, args mcpserver.ImportArgs, bar *importProgress) (mcpserver.ImportReport, error)
}

// localTarget works on the file opened in this process.
type localTarget struct{ svc *ops.Service }

func (t localTarget) invoke(ctx context.Context, tool *tools.Tool, args, out any) error {
	res, err := tool.Invoke(ctx, t.svc, args)
	if err != nil {
		return err
	}
	dst := reflect.ValueOf(out)
	if dst.Kind() != reflect.Pointer || dst.Elem().Type() != tool.ResultType {
		return fmt.Errorf("%s gives %s, not %T", tool.Name, tool.ResultType, out)
	}
	dst.Elem().Set(reflect.ValueOf(res))
	return nil
}

func (t localTarget) call(ctx context.Context, tool *tools.Tool, args json.RawMessage) (json.RawMessage, error) {
	res, err := tool.Call(ctx, t.svc, args)
	if err != nil {
		return nil, err
	}
	// As the listener encodes it, so the output is the same either way.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func (t localTarget) outline(_ context.Context, ref string) (mcpserver.Outline, error) {
	return mcpserver.ThreadOutline(t.svc, ref)
}

func (t localTarget) export(ctx context.Context, w io.Writer, args mcpserver.ExportArgs) ([]string, error) {
	return mcpserver.Export(ctx, t.svc, w, args)
}

func (t localTarget) importFile(ctx context.Context, f io.Reader, args mcpserver.ImportArgs, bar *importProgress) (mcpserver.ImportReport, error) {
	return mcpserver.Import(ctx, t.svc, f, args, bar.update), nil
}

// remoteTarget works through the running weft that holds the file, over
// its listener.
type remoteTarget struct{ r *mcpserver.Remote }

func (t remoteTarget) invoke(ctx context.Context, tool *tools.Tool, args, out any) error {
	return t.r.Invoke(ctx, tool, args, out)
}

func (t remoteTarget) call(ctx context.Context, tool *tools.Tool, args json.RawMessage) (json.RawMessage, error) {
	return t.r.Call(ctx, tool, args)
}

func (t remoteTarget) outline(ctx context.Context, ref string) (mcpserver.Outline, error) {
	return t.r.Outline(ctx, ref)
}

func (t remoteTarget) export(ctx context.Context, w io.Writer, args mcpserver.ExportArgs) ([]string, error) {
	return t.r.Export(ctx, w, args)
}

func (t remoteTarget) importFile(ctx context.Context, f io.Reader, args mcpserver.ImportArgs, bar *importProgress) (mcpserver.ImportReport, error) {
	// The running weft reports once, at the end: meanwhile the bar
	// shows how much of the file it has taken.
	stop := bar.tick()
	defer stop()
	return t.r.Import(ctx, f, args)
}

// invoke runs the tool name on t, its result as R.
func invoke[R any](ctx context.Context, t target, name string, args any) (R, error) {
	var res R
	tool, ok := tools.Lookup(name)
	if !ok {
		return res, fmt.Errorf("this weft has no tool %s", name)
	}
	err := t.invoke(ctx, tool, args, &res)
	return res, err
}

// withTarget runs fn on the database file: opened here (read-only for
// reading), or, when a running weft holds it, through that weft. A
// reading command on a file that is not there says so and makes none.
func (a *app) withTarget(acc access, fn func(target) error) (err error) {
	if acc == reading {
		if _, err := os.Stat(a.db); errors.Is(err, os.ErrNotExist) {
			return a.noDatabase()
		}
	}
	// A weft that left its address is most likely running: find out
	// quickly rather than wait the whole lock timeout to go through it.
	var timeout time.Duration
	if mcpserver.ReadAddrFile(a.db) != "" {
		timeout = 200 * time.Millisecond
	}
	f, err := a.openDB(timeout, acc == reading)
	if errors.Is(err, store.ErrInUse) {
		url := mcpserver.ReadAddrFile(a.db)
		if url == "" {
			return fmt.Errorf("%w; nothing that listens for other wefts holds it (a TUI started with --no-mcp, or another command at work), so this command cannot go through it: run it again once that one is done", err)
		}
		r, err := mcpserver.NewRemote(url, a.bearer())
		if err != nil {
			return fmt.Errorf("%s.addr: %w", a.db, err)
		}
		return fn(remoteTarget{r})
	}
	if err != nil {
		return err
	}
	defer func() { f.close(err) }()
	return fn(localTarget{f.svc})
}

// noDatabase says that --db names no file, and how to make one.
func (a *app) noDatabase() error {
	return fmt.Errorf("there is no database at %s: weft import FILE or weft new TITLE makes one there (or --db names the file you meant)", a.db)
}
