package relay

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"weft/formats"
	"weft/formats/readers"
	"weft/ops"
	"weft/ops/httpx"
	"weft/ops/ingest"
	"weft/ops/tools"
)

// MaxImportBytes caps a file imported through the listener (POST
// /import). It is read as it comes, never held whole, so the cap only
// bounds how long one request may go on.
const MaxImportBytes = 4 << 30

// The listener's paths for the command line's whole-thread and
// whole-file work (tools.Files).
const (
	outlinePath = "/outline"
	exportPath  = "/export"
	importPath  = "/import"
)

// Trailers of an export: a note of the exporter's each, and the error
// that cut the export short, if one did; values are URL-escaped.
const (
	noteTrailer  = "X-Weft-Note"
	errorTrailer = "X-Weft-Error"
)

// holder serves the whole-thread and whole-file endpoints over the file
// this weft holds, for the wefts that go through it (Remote's Files).
type holder struct {
	files  tools.Local
	logger *slog.Logger
}

// HolderFace is what the weft that holds the file serves on its listener
// for the command line and the operator's client of the wefts that go through it
// (Remote's tools.Files and tools.Desk), with the same results as
// in-process:
//
//	POST /outline    {"session_id"}: what weft show prints around the messages (tools.Outline)
//	POST /export     tools.ExportArgs as JSON: the export, streamed; notes as trailers
//	POST /import     ?format=F&session=S, the file as the body: a tools.ImportReport
//	POST /desk/CALL  what tools.Desk reads and does that no tool does (desk.go)
//
// An imported file may be far larger than any other body: it is read as
// it comes, up to MaxImportBytes.
func HolderFace(svc *ops.Service, logger *slog.Logger) httpx.Face {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	h := &holder{files: tools.Local{Service: svc}, logger: logger}
	return httpx.Face{Mounts: []httpx.Mount{
		{Pattern: outlinePath, Handler: http.HandlerFunc(h.serveOutline), Serves: "POST /outline, /export and /import"},
		{Pattern: exportPath, Handler: http.HandlerFunc(h.serveExport)},
		{
			Pattern: importPath, Handler: http.HandlerFunc(h.serveImport),
			MaxBody: MaxImportBytes, TooLarge: func(w http.ResponseWriter, _ *http.Request) { writeImportTooLarge(w) },
		},
		deskMount(h.files),
	}}
}

// serveOutline answers POST /outline {"session_id": ...} with the
// session's Outline.
func (h *holder) serveOutline(w http.ResponseWriter, r *http.Request) {
	if !httpx.PostOnly(w, r) {
		return
	}
	var args struct {
		SessionID string `json:"session_id"`
	}
	if !httpx.ReadArgs(w, r, &args) {
		return
	}
	o, err := h.files.Outline(r.Context(), args.SessionID)
	if err != nil {
		httpx.WriteError(w, httpx.StatusOf(err), err.Error())
		return
	}
	httpx.WriteJSON(w, http.StatusOK, o)
}

// exportTypes are the content types of the export formats.
var exportTypes = map[string]string{
	"openai": "application/json", "anthropic": "application/json",
	"jsonl": "application/x-ndjson", "markdown": "text/markdown; charset=utf-8", "claude-code": "application/x-ndjson",
}

// serveExport answers POST /export with tools.ExportArgs as its JSON body: the
// export itself as the body, streamed, with the exporter's notes (and an
// error that cut it short) as trailers.
func (h *holder) serveExport(w http.ResponseWriter, r *http.Request) {
	if !httpx.PostOnly(w, r) {
		return
	}
	var args tools.ExportArgs
	if !httpx.ReadArgs(w, r, &args) {
		return
	}
	if !slices.Contains(tools.ExportFormats, args.Format) {
		httpx.WriteError(w, http.StatusBadRequest, fmt.Sprintf("unknown export format %q: %s", args.Format, strings.Join(tools.ExportFormats, ", ")))
		return
	}
	ew := &exportWriter{w: w, contentType: exportTypes[args.Format]}
	notes, err := h.files.Export(r.Context(), ew, args)
	if !ew.started {
		if err != nil {
			httpx.WriteError(w, httpx.StatusOf(err), err.Error())
			return
		}
		ew.start()
	}
	for _, n := range notes {
		w.Header().Add(http.TrailerPrefix+noteTrailer, url.QueryEscape(n))
	}
	if err != nil {
		h.logger.Warn("export cut short", "error", err)
		w.Header().Set(http.TrailerPrefix+errorTrailer, url.QueryEscape(err.Error()))
	}
}

// exportWriter sends the headers of a good answer with the first byte of
// the export, so a session that cannot be found is still answered with
// its error.
type exportWriter struct {
	w           http.ResponseWriter
	contentType string
	started     bool
}

func (e *exportWriter) start() {
	e.started = true
	e.w.Header().Set("Content-Type", e.contentType)
	e.w.Header().Set("X-Content-Type-Options", "nosniff")
	e.w.WriteHeader(http.StatusOK)
}

func (e *exportWriter) Write(p []byte) (int, error) {
	if !e.started {
		e.start()
	}
	return e.w.Write(p)
}

// importReportJSON is an ImportReport on the wire.
type importReportJSON struct {
	Format   formats.Format           `json:"format"`
	Refused  string                   `json:"refused,omitempty"`
	Problems []problemJSON            `json:"problems"`
	Sessions []ingest.ImportedSession `json:"sessions"`
	Stopped  string                   `json:"stopped,omitempty"`
}

// problemJSON is a formats.Problem on the wire.
type problemJSON struct {
	Line  int    `json:"line,omitempty"`
	Error string `json:"error"`
	Note  bool   `json:"note,omitempty"`
	More  int    `json:"more,omitempty"`
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func textErr(s string) error {
	if s == "" {
		return nil
	}
	return errors.New(s)
}

func wireReport(rep tools.ImportReport) importReportJSON {
	out := importReportJSON{Format: rep.Format, Refused: errText(rep.Refused), Stopped: errText(rep.Stopped),
		Problems: make([]problemJSON, len(rep.Problems)), Sessions: rep.Sessions}
	for i, p := range rep.Problems {
		out.Problems[i] = problemJSON{Line: p.Line, Error: p.Err, Note: p.Note, More: p.More}
	}
	if out.Sessions == nil {
		out.Sessions = []ingest.ImportedSession{}
	}
	return out
}

func (w importReportJSON) report() tools.ImportReport {
	rep := tools.ImportReport{Format: w.Format, Refused: textErr(w.Refused), Stopped: textErr(w.Stopped), Sessions: w.Sessions}
	for _, p := range w.Problems {
		rep.Problems = append(rep.Problems, formats.Problem{Line: p.Line, Err: p.Error, Note: p.Note, More: p.More})
	}
	return rep
}

// serveImport answers POST /import?format=F&session=S, whose body is the
// file, with what the import did (a tools.ImportReport, as JSON). The file is
// read as it comes, up to MaxImportBytes.
func (h *holder) serveImport(w http.ResponseWriter, r *http.Request) {
	if !httpx.PostOnly(w, r) {
		return
	}
	q := r.URL.Query()
	format := formats.Format(q.Get("format"))
	if _, ok := readers.For(format); format != "" && !ok {
		var names []string
		for _, f := range formats.Formats {
			names = append(names, string(f))
		}
		httpx.WriteError(w, http.StatusBadRequest, fmt.Sprintf("unknown format %q; the formats are %s", format, strings.Join(names, ", ")))
		return
	}
	rep, _ := h.files.Import(ops.WithAuthor(r.Context(), httpx.Author(r)), r.Body, tools.ImportArgs{Format: format, Session: q.Get("session")}, nil)
	// A body that stalled or ran past the cap is the request's fault,
	// not the file's: it is answered as any such request is.
	for _, err := range []error{rep.Refused, rep.Stopped} {
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			writeImportTooLarge(w)
			return
		case errors.Is(err, httpx.ErrBodyTooSlow):
			httpx.BodyReadError(w, httpx.ErrBodyTooSlow)
			return
		}
	}
	httpx.WriteJSON(w, http.StatusOK, wireReport(rep))
}

// writeImportTooLarge refuses a file over MaxImportBytes.
func writeImportTooLarge(w http.ResponseWriter) {
	httpx.WriteError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the file is larger than %d GB, more than a running weft takes: split it, or close that weft and import it directly", MaxImportBytes>>30))
}
