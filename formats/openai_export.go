package formats

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"weft/model"
)

// Provider exports write the effective thread in the shape a provider's
// API takes, and keep it valid whatever the operations did to it: a
// snip or digest can take away one half of a tool call/result pair, a
// resequence can move a result away from its call, a digest or an
// insertion leaves system messages in the middle. What had to change is
// said in the Report, one line per change.
//
// Both exporters read the thread the same way (xpThread): each item
// becomes a run of blocks (text, thinking, image, tool call, tool
// result) in one flat slice, tool calls get the IDs and names the
// provider takes, then a pairing pass marks each call and result as
// paired or folded into text, and the writer streams one message at a
// time.

// Report says what an export had to change to be valid.
type Report struct {
	// Folded has one human line per change, in thread order, e.g.
	// "item m41: tool result for call toolu_01 whose call is not in the
	// thread: kept as text".
	Folded []string
}

type xpTarget uint8

const (
	xpOpenAI xpTarget = iota
	xpAnthropic
)

type xpKind uint8

const (
	xpText xpKind = iota
	xpThinking
	xpImage
	xpCall
	xpResult
)

// xpBlock is one block of an exported message.
type xpBlock struct {
	kind xpKind
	// attached: an image in the content of the tool result before it.
	attached bool
	// folded: a call or result that is written as text.
	folded bool
	isErr  bool
	item   int32
	// pair links a call and its result (block indices); -1 if unpaired.
	pair int32
	// text of a text or thinking block; the output of a result.
	text string
	// id of a call as exported; orig its ID as stored (a result's orig
	// names the call it answers).
	id, orig string
	// name of a call as exported; shown, the tool's name as stored (for
	// folded text; a result's tool name where known).
	name, shown string
	// input of a call as exported: a JSON object for Anthropic (wrapped
	// if the stored input was not one: 1 not an object, 2 not JSON), the
	// arguments string for OpenAI (in args).
	input   json.RawMessage
	wrapped uint8
	args    string
	// part is a call's stored part.
	part *model.Part
	// signature or redacted data of a kept thinking block.
	signature, redacted string
	img                 *xpImageSource
}

// xpItem is an item of the thread: its blocks bl[lo:hi] and the role it
// is written as.
type xpItem struct {
	lo, hi int32
	role   model.Role
	// thinking: the item had thinking blocks (dropping them is normal,
	// so an item left empty by it is dropped without a word).
	thinking bool
}

func (x *xpItem) live() bool { return x.hi > x.lo }

type xpNote struct {
	item int
	text string
}

// xpThread is a thread read for a provider export.
type xpThread struct {
	target xpTarget
	items  []Item
	xi     []xpItem
	bl     []xpBlock
	notes  []xpNote
	// calls: the stored IDs of every tool call in the thread, with its
	// tool name; results: the call IDs the thread's results answer.
	calls   map[string]string
	results map[string]struct{}
	// used: the call IDs given out so far.
	used map[string]struct{}
	// renamed: tool names that had to change, reported once each.
	renamed map[string]string
}

func (x *xpThread) note(item int, format string, args ...any) {
	x.notes = append(x.notes, xpNote{item, fmt.Sprintf(format, args...)})
}

// itemRef names an item in a note.
func (x *xpThread) itemRef(i int) string {
	if id := x.items[i].ID; id != "" {
		return "item " + string(id)
	}
	return "item #" + strconv.Itoa(i)
}

func (x *xpThread) report() Report {
	slices.SortStableFunc(x.notes, func(a, b xpNote) int { return a.item - b.item })
	var r Report
	for _, n := range x.notes {
		r.Folded = append(r.Folded, n.text)
	}
	return r
}

// xpRole is the role an item is written as: digest summaries are
// system messages, an unknown role is a user's.
func xpRole(it *Item) model.Role {
	if it.Synthetic && it.OpType == model.OpDigest {
		return model.RoleSystem
	}
	switch it.Role {
	case model.RoleSystem, model.RoleUser, model.RoleAssistant, model.RoleTool:
		return it.Role
	}
	return model.RoleUser
}

// xpStructural reports whether parts say more than the item's content:
// an item without them exports its content as text.
func xpStructural(parts []model.Part) bool {
	for i := range parts {
		switch parts[i].Type {
		case model.PartText, model.PartThinking, model.PartImage, model.PartToolCall, model.PartToolResult:
			return true
		}
	}
	return false
}

func xpRead(items []Item, target xpTarget) *xpThread {
	x := &xpThread{
		target:  target,
		items:   items,
		xi:      make([]xpItem, len(items)),
		bl:      make([]xpBlock, 0, len(items)+len(items)/4),
		calls:   map[string]string{},
		results: map[string]struct{}{},
		used:    map[string]struct{}{},
	}
	for i := range items {
		for k := range items[i].Parts {
			p := &items[i].Parts[k]
			switch {
			case p.ToolCallID == "":
			case p.Type == model.PartToolCall:
				if _, ok := x.calls[p.ToolCallID]; !ok {
					x.calls[p.ToolCallID] = p.ToolName
				}
			case p.Type == model.PartToolResult:
				x.results[p.ToolCallID] = struct{}{}
			}
		}
	}
	for i := range items {
		x.readItem(i)
	}
	return x
}

func (x *xpThread) readItem(i int) {
	it := &x.items[i]
	xi := &x.xi[i]
	xi.role = xpRole(it)
	xi.lo = int32(len(x.bl))
	switch {
	case !xpStructural(it.Parts):
		if xi.role == model.RoleTool {
			x.addResult(i, "", it.Name, it.Content, false)
		} else {
			x.addText(i, it.Content)
		}
	case xi.role == model.RoleTool:
		x.readToolParts(i, it)
	default:
		for k := range it.Parts {
			p := &it.Parts[k]
			switch p.Type {
			case model.PartText:
				x.addText(i, p.Text)
			case model.PartThinking:
				xi.thinking = true
				if xi.role == model.RoleAssistant && x.target == xpAnthropic {
					x.addThinking(i, p)
				}
			case model.PartImage:
				x.addImage(i, p, xi.role == model.RoleUser, -1)
			case model.PartToolCall:
				if xi.role == model.RoleAssistant {
					x.addCall(i, k, p)
					continue
				}
				x.note(i, "%s: tool call %s in a %s message: kept as text", x.itemRef(i), xpDescribeCall(p.ToolCallID, p.ToolName), xi.role)
				x.addText(i, xpCallText(p.ToolName, p.Input))
			case model.PartToolResult:
				if xi.role == model.RoleUser {
					x.addResult(i, p.ToolCallID, x.resultName(i, p), p.Text, p.IsError)
					continue
				}
				x.note(i, "%s: tool result in a %s message: kept as text", x.itemRef(i), xi.role)
				x.addText(i, xpResultText(x.resultName(i, p), p.Text, p.IsError))
			}
		}
	}
	if xi.role == model.RoleSystem {
		x.joinText(xi)
	}
	xi.hi = int32(len(x.bl))
	if !xi.live() && !xi.thinking {
		x.note(i, "%s: empty %s message: dropped", x.itemRef(i), xi.role)
	}
}

// readToolParts reads a tool message: its results, with the text and
// images around them in their content. Text and images before the
// first result belong to it; a tool message without results is one.
func (x *xpThread) readToolParts(i int, it *Item) {
	first := slices.IndexFunc(it.Parts, func(p model.Part) bool { return p.Type == model.PartToolResult })
	if first < 0 {
		x.addResult(i, "", it.Name, "", false)
	} else {
		p := &it.Parts[first]
		x.addResult(i, p.ToolCallID, x.resultName(i, p), p.Text, p.IsError)
	}
	head := len(x.bl) - 1
	cur := head
	var before []string
	for k := range it.Parts {
		if k == first {
			continue
		}
		p := &it.Parts[k]
		text := ""
		switch p.Type {
		case model.PartToolResult:
			x.addResult(i, p.ToolCallID, x.resultName(i, p), p.Text, p.IsError)
			cur = len(x.bl) - 1
		case model.PartText:
			text = p.Text
		case model.PartImage:
			x.addImage(i, p, true, cur)
		case model.PartToolCall:
			x.note(i, "%s: tool call %s in a tool message: kept as text", x.itemRef(i), xpDescribeCall(p.ToolCallID, p.ToolName))
			text = xpCallText(p.ToolName, p.Input)
		case model.PartThinking:
			x.xi[i].thinking = true
		}
		switch {
		case strings.TrimSpace(text) == "":
		case k < first:
			before = append(before, text)
		default:
			x.bl[cur].text = xpJoin(x.bl[cur].text, text, "\n")
		}
	}
	if len(before) > 0 {
		x.bl[head].text = xpJoin(strings.Join(before, "\n"), x.bl[head].text, "\n")
	}
}

// joinText makes a system message's blocks one text block.
func (x *xpThread) joinText(xi *xpItem) {
	if int(xi.lo)+1 >= len(x.bl) {
		return
	}
	var b strings.Builder
	for _, blk := range x.bl[xi.lo:] {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(blk.text)
	}
	x.bl = x.bl[:xi.lo+1]
	x.bl[xi.lo].text = b.String()
}

// xpJoin joins a and b with sep, or is the one that is not empty.
func xpJoin(a, b, sep string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + sep + b
}

func (x *xpThread) addText(i int, text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	x.bl = append(x.bl, xpBlock{kind: xpText, item: int32(i), pair: -1, text: text})
}

func (x *xpThread) addThinking(i int, p *model.Part) {
	if len(p.Raw) == 0 || !bytes.Contains(p.Raw, []byte(`"signature"`)) && !bytes.Contains(p.Raw, []byte(`"redacted_thinking"`)) {
		return
	}
	var raw struct {
		Type      string  `json:"type"`
		Thinking  *string `json:"thinking"`
		Signature string  `json:"signature"`
		Data      string  `json:"data"`
	}
	if json.Unmarshal(p.Raw, &raw) != nil {
		return
	}
	b := xpBlock{kind: xpThinking, item: int32(i), pair: -1, text: p.Text}
	switch {
	case raw.Type == "redacted_thinking" && raw.Data != "":
		b.redacted = raw.Data
	case raw.Signature != "":
		b.signature = raw.Signature
		if raw.Thinking != nil {
			b.text = *raw.Thinking // what was signed
		}
	default:
		return
	}
	x.bl = append(x.bl, b)
}

// addImage adds an image: as an image block where the provider takes
// one (user content, tool results) and the source has its data, else as
// a placeholder. An image of a tool result (result >= 0, the result's
// block) goes in its content.
func (x *xpThread) addImage(i int, p *model.Part, canImage bool, result int) {
	if canImage {
		if src := xpReadImage(p, x.target); src != nil {
			x.bl = append(x.bl, xpBlock{kind: xpImage, item: int32(i), pair: -1, attached: result >= 0, img: src})
			return
		}
	}
	text := xpImageText(p.MediaType)
	if result >= 0 {
		x.bl[result].text = xpJoin(x.bl[result].text, text, "\n")
		return
	}
	x.addText(i, text)
}

func xpImageText(mediaType string) string {
	if mediaType == "" {
		return "[image]"
	}
	return "[image " + mediaType + "]"
}

func (x *xpThread) addCall(i, k int, p *model.Part) {
	b := xpBlock{kind: xpCall, item: int32(i), pair: -1, orig: p.ToolCallID, shown: p.ToolName, part: p}
	b.id = x.callID(i, k, p.ToolCallID)
	b.name = x.toolName(p.ToolName)
	if x.target == xpAnthropic {
		b.input, b.wrapped = xpObjectInput(p.Input)
	} else {
		b.args = compactJSON(p.Input)
		if b.args == "" {
			b.args = "{}"
		}
	}
	x.bl = append(x.bl, b)
}

func (x *xpThread) addResult(i int, callID, name, text string, isErr bool) {
	x.bl = append(x.bl, xpBlock{kind: xpResult, item: int32(i), pair: -1, orig: callID, shown: name, text: text, isErr: isErr})
}

// resultName is the tool name of a result, where the thread knows it.
func (x *xpThread) resultName(i int, p *model.Part) string {
	if p.ToolName != "" {
		return p.ToolName
	}
	if n := x.items[i].Name; n != "" && x.xi[i].role == model.RoleTool {
		return n
	}
	return x.calls[p.ToolCallID]
}

// callID is the ID a call is exported with: its own where it has a
// usable one, else a generated one; unique in the document.
func (x *xpThread) callID(i, k int, orig string) string {
	id := orig
	if x.target == xpAnthropic && id != "" && !xpValidName(id, 1<<20) {
		id = xpSanitize(id, 1<<20)
	}
	if _, dup := x.used[id]; id == "" || dup {
		base := id
		if base == "" {
			prefix := "call_"
			if x.target == xpAnthropic {
				prefix = "toolu_"
			}
			base = prefix + xpSanitize(string(x.items[i].ID), 1<<20) + "_" + strconv.Itoa(k)
		}
		id = base
		for n := 2; x.taken(id, orig); n++ {
			id = base + "_" + strconv.Itoa(n)
		}
	}
	x.used[id] = struct{}{}
	return id
}

// taken reports whether id is given out already, or is the stored ID of
// another call (which may come later).
func (x *xpThread) taken(id, orig string) bool {
	if _, ok := x.used[id]; ok {
		return true
	}
	if _, ok := x.calls[id]; ok && id != orig {
		return true
	}
	return false
}

// toolName is a call's tool name as the provider takes it.
func (x *xpThread) toolName(name string) string {
	max := x.maxName()
	if xpValidName(name, max) {
		return name
	}
	if x.renamed == nil {
		x.renamed = map[string]string{}
	}
	out, ok := x.renamed[name]
	if !ok {
		out = xpSanitize(name, max)
		if out == "" {
			out = "tool"
		}
		x.renamed[name] = out
	}
	return out
}

func (x *xpThread) maxName() int {
	if x.target == xpAnthropic {
		return 128
	}
	return 64
}

// noteCalls reports, after pairing, what changed in the calls that are
// sent as calls: tool names (once each), inputs wrapped.
func (x *xpThread) noteCalls() {
	var told map[string]bool
	for c := range x.bl {
		b := &x.bl[c]
		if b.kind != xpCall || b.folded {
			continue
		}
		i := int(b.item)
		if b.name != b.shown && !told[b.shown] {
			if told == nil {
				told = map[string]bool{}
			}
			told[b.shown] = true
			x.note(i, "%s: tool name %q is not valid (%s): sent as %q, here and in every later call", x.itemRef(i), b.shown, xpNamePattern(x.maxName()), b.name)
		}
		switch b.wrapped {
		case 1:
			x.note(i, "%s: tool call %s: input is not a JSON object: sent as {\"value\": ...}", x.itemRef(i), xpDescribeCall(b.orig, b.shown))
		case 2:
			x.note(i, "%s: tool call %s: input is not JSON: sent as {\"value\": \"...\"}", x.itemRef(i), xpDescribeCall(b.orig, b.shown))
		}
	}
}

func xpNamePattern(max int) string { return "[a-zA-Z0-9_-]{1," + strconv.Itoa(max) + "}" }

func xpNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// xpValidName reports whether s matches [a-zA-Z0-9_-]{1,max}.
func xpValidName(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !xpNameByte(s[i]) {
			return false
		}
	}
	return true
}

// xpSanitize replaces the characters a name may not have with '_' and
// cuts it to max bytes.
func xpSanitize(s string, max int) string {
	b := []byte(s)
	for i := range b {
		if !xpNameByte(b[i]) {
			b[i] = '_'
		}
	}
	if len(b) > max {
		b = b[:max]
	}
	return string(b)
}

// xpObjectInput is a call's input as a JSON object, as Anthropic's
// tool_use takes it; anything else is wrapped as {"value": ...} (wrapped
// 1), a value that is not JSON as a string (wrapped 2).
func xpObjectInput(input json.RawMessage) (_ json.RawMessage, wrapped uint8) {
	in := bytes.TrimSpace(input)
	switch {
	case len(in) == 0 || string(in) == "null":
		return json.RawMessage("{}"), 0
	case !json.Valid(in):
		s, _ := json.Marshal(string(input))
		return json.RawMessage(`{"value":` + string(s) + `}`), 2
	case in[0] == '{':
		return in, 0
	}
	return json.RawMessage(`{"value":` + string(in) + `}`), 1
}

func xpDescribeCall(id, name string) string {
	switch {
	case id == "" && name == "":
		return "without an id"
	case id == "":
		return "(" + name + ") without an id"
	case name == "":
		return id
	}
	return id + " (" + name + ")"
}

// xpCallText is a tool call written as text, as RenderContent has it.
func xpCallText(name string, input json.RawMessage) string {
	s := "[tool call " + name + "]"
	if in := compactJSON(input); in != "" && in != "{}" {
		s += " " + in
	}
	return s
}

// xpResultText is a tool result written as text.
func xpResultText(name, output string, isErr bool) string {
	s := "[tool result"
	if isErr {
		s = "[tool error"
	}
	if name != "" {
		s += " " + name
	}
	s += "]"
	if output != "" {
		s += " " + output
	}
	return s
}

// match finds the call among calls (block indices) that result block r
// answers: the first unanswered one with its ID; a result without an ID
// answers the first unanswered call that had none.
func (x *xpThread) match(calls []int32, r int32) bool {
	orig := x.bl[r].orig
	for _, c := range calls {
		if cb := &x.bl[c]; cb.pair < 0 && !cb.folded && cb.orig == orig {
			cb.pair, x.bl[r].pair = r, c
			return true
		}
	}
	return false
}

func (x *xpThread) foldCall(c int32) {
	b := &x.bl[c]
	b.folded = true
	why := "has no result in the thread"
	if _, ok := x.results[b.orig]; ok && b.orig != "" {
		why = "is not answered right after it"
	}
	x.note(int(b.item), "%s: tool call %s %s: kept as text", x.itemRef(int(b.item)), xpDescribeCall(b.orig, b.shown), why)
}

func (x *xpThread) foldResult(r int32) {
	b := &x.bl[r]
	b.folded = true
	i := int(b.item)
	if b.orig == "" {
		x.note(i, "%s: tool result without a call id that answers no call right before it: kept as text", x.itemRef(i))
		return
	}
	if _, ok := x.calls[b.orig]; ok {
		x.note(i, "%s: tool result for call %s that does not come right after its call: kept as text", x.itemRef(i), b.orig)
		return
	}
	x.note(i, "%s: tool result for call %s whose call is not in the thread: kept as text", x.itemRef(i), b.orig)
}

// foldedText is the text of a folded call or result.
func (b *xpBlock) foldedText() string {
	if b.kind == xpCall {
		return xpCallText(b.part.ToolName, b.part.Input)
	}
	return xpResultText(b.shown, b.text, b.isErr)
}

// xpImageSource is an image's data (base64, with its media type) or URL.
type xpImageSource struct {
	mediaType, data, url string
}

// xpReadImage finds an image's data in its source block: an Anthropic
// source (base64 or url), an OpenAI image_url or input_image (a data:
// URL or a link).
func xpReadImage(p *model.Part, target xpTarget) *xpImageSource {
	if len(p.Raw) == 0 || p.Raw[0] != '{' {
		return nil
	}
	var raw struct {
		Source *struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      string `json:"data"`
			URL       string `json:"url"`
		} `json:"source"`
		ImageURL json.RawMessage `json:"image_url"`
	}
	if json.Unmarshal(p.Raw, &raw) != nil {
		return nil
	}
	src := &xpImageSource{mediaType: p.MediaType}
	switch {
	case raw.Source != nil && raw.Source.Type == "base64" && raw.Source.Data != "":
		src.data = raw.Source.Data
		if raw.Source.MediaType != "" {
			src.mediaType = raw.Source.MediaType
		}
	case raw.Source != nil && raw.Source.Type == "url" && raw.Source.URL != "":
		src.url = raw.Source.URL
	case len(raw.ImageURL) > 0:
		var u string
		if json.Unmarshal(raw.ImageURL, &u) != nil {
			var o struct {
				URL string `json:"url"`
			}
			json.Unmarshal(raw.ImageURL, &o)
			u = o.URL
		}
		if rest, ok := strings.CutPrefix(u, "data:"); ok {
			mt, data, ok := strings.Cut(rest, ";base64,")
			if !ok || data == "" {
				return nil
			}
			src.data = data
			if mt != "" {
				src.mediaType = mt
			}
		} else {
			src.url = u
		}
	default:
		return nil
	}
	if src.url != "" && !strings.HasPrefix(src.url, "https://") && !strings.HasPrefix(src.url, "http://") {
		return nil
	}
	if src.data != "" && target == xpAnthropic {
		switch src.mediaType {
		case "image/jpeg", "image/png", "image/gif", "image/webp":
		default:
			return nil
		}
	}
	if src.data != "" && src.mediaType == "" {
		return nil
	}
	return src
}

// xpLines writes a JSON document whose array elements are encoded one
// at a time, one a line.
type xpLines struct {
	w   *bufio.Writer
	buf bytes.Buffer
	enc *json.Encoder
	n   int
}

func xpNewLines(w io.Writer) *xpLines {
	j := &xpLines{w: bufio.NewWriterSize(w, 1<<16)}
	j.enc = json.NewEncoder(&j.buf)
	j.enc.SetEscapeHTML(false)
	return j
}

// end closes the array and the document.
func (j *xpLines) end() error {
	if j.n > 0 {
		j.w.WriteString("\n")
	}
	j.w.WriteString("]}\n")
	return j.w.Flush()
}

// value encodes v without its newline.
func (j *xpLines) value(v any) error {
	j.buf.Reset()
	if err := j.enc.Encode(v); err != nil {
		return err
	}
	_, err := j.w.Write(j.buf.Bytes()[:j.buf.Len()-1])
	return err
}

// elem writes v as the next element of the array.
func (j *xpLines) elem(v any) error {
	if j.n > 0 {
		j.w.WriteString(",\n")
	} else {
		j.w.WriteString("\n")
	}
	j.n++
	return j.value(v)
}

// OpenAI chat completions messages.

type xoMessage struct {
	Role       string       `json:"role"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
	Name       string       `json:"name,omitempty"`
	Content    any          `json:"content"`
	ToolCalls  []xoToolCall `json:"tool_calls,omitempty"`
}

type xoToolCall struct {
	ID       string     `json:"id"`
	Type     string     `json:"type"`
	Function xoFunction `json:"function"`
}

type xoFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type xoPart struct {
	Type     string      `json:"type"`
	Text     string      `json:"text,omitempty"`
	ImageURL *xoImageURL `json:"image_url,omitempty"`
}

type xoImageURL struct {
	URL string `json:"url"`
}

// WriteOpenAI writes {"messages": [...]} as chat completions takes it.
//
// Tool calls go in the assistant's tool_calls, each result in a tool
// message right after. The thread is kept valid: a tool message answers
// a call of the last assistant message with tool calls, with only tool
// messages between them, and every call is answered before the next
// message of another role. A call or result that cannot be (its other
// half was snipped, or is elsewhere) is folded into text: a call into
// its assistant's content, a result into a user message after the run
// of tool messages it was in. System messages (digest summaries
// included) stay where they are. Thinking is dropped.
func WriteOpenAI(w io.Writer, items []Item) (Report, error) {
	x := xpRead(items, xpOpenAI)
	x.pairOpenAI()
	x.noteCalls()
	o := &xoWriter{x: x, j: xpNewLines(w)}
	o.j.w.WriteString("{\"messages\":[")
	err := o.write()
	if err == nil {
		err = o.j.end()
	}
	return x.report(), err
}

// xoWriter writes the messages, reusing one message value and its
// buffers: nothing is allocated per message but the strings joined.
type xoWriter struct {
	x        *xpThread
	j        *xpLines
	m        xoMessage
	calls    []xoToolCall
	parts    []xoPart
	pieces   []string
	content  string
	deferred []int32
}

func (o *xoWriter) write() error {
	x := o.x
	for i := range x.xi {
		xi := &x.xi[i]
		if !xi.live() {
			continue
		}
		switch xi.role {
		case model.RoleAssistant, model.RoleSystem:
			if err := o.flush(); err != nil {
				return err
			}
			o.pieces, o.calls = o.pieces[:0], o.calls[:0]
			for b := xi.lo; b < xi.hi; b++ {
				blk := &x.bl[b]
				switch {
				case blk.kind == xpCall && !blk.folded:
					o.calls = append(o.calls, xoToolCall{ID: blk.id, Type: "function", Function: xoFunction{Name: blk.name, Arguments: blk.args}})
				case blk.kind == xpCall:
					o.pieces = append(o.pieces, blk.foldedText())
				default:
					o.pieces = append(o.pieces, blk.text)
				}
			}
			o.m = xoMessage{Role: string(xi.role), Name: x.oaName(i), ToolCalls: o.calls}
			if len(o.pieces) > 0 || len(o.calls) == 0 {
				o.setText("\n\n")
			}
			if err := o.j.elem(&o.m); err != nil {
				return err
			}
		default:
			other := false
			for b := xi.lo; b < xi.hi; b++ {
				blk := &x.bl[b]
				switch {
				case blk.kind == xpResult && blk.folded:
					o.deferred = append(o.deferred, b)
				case blk.kind == xpResult:
					o.m = xoMessage{Role: "tool", ToolCallID: x.bl[blk.pair].id}
					o.pieces = append(o.pieces[:0], blk.text)
					for a := b + 1; a < xi.hi && x.bl[a].attached; a++ {
						o.pieces = append(o.pieces, xpImageText(x.bl[a].img.mediaType))
					}
					o.setText("\n")
					if err := o.j.elem(&o.m); err != nil {
						return err
					}
				case blk.attached:
				default:
					other = true
				}
			}
			if !other {
				continue
			}
			if err := o.flush(); err != nil {
				return err
			}
			o.user(xi.lo, xi.hi, false)
			o.m.Name = x.oaName(i)
			if err := o.j.elem(&o.m); err != nil {
				return err
			}
		}
	}
	return o.flush()
}

// flush writes the folded results deferred to the end of a run of tool
// messages, each as a user message.
func (o *xoWriter) flush() error {
	for _, r := range o.deferred {
		o.user(r, r+1+o.x.attachedCount(r), true)
		if err := o.j.elem(&o.m); err != nil {
			return err
		}
	}
	o.deferred = o.deferred[:0]
	return nil
}

// setText makes the pieces the message's content.
func (o *xoWriter) setText(sep string) {
	switch len(o.pieces) {
	case 0:
		o.content = ""
	case 1:
		o.content = o.pieces[0]
	default:
		o.content = strings.Join(o.pieces, sep)
	}
	o.m.Content = &o.content
}

func xpPara(b *strings.Builder, s string) {
	if b.Len() > 0 {
		b.WriteString("\n\n")
	}
	b.WriteString(s)
}

func (x *xpThread) attachedCount(r int32) int32 {
	n := int32(0)
	for a := r + 1; int(a) < len(x.bl) && x.bl[a].attached; a++ {
		n++
	}
	return n
}

// user makes the message a user message of the blocks bl[lo:hi]: text
// and images; results are skipped (they are tool messages, or
// deferred), unless folded is set: then bl[lo:hi] is one folded result
// and its images.
func (o *xoWriter) user(lo, hi int32, folded bool) {
	x := o.x
	o.parts, o.pieces = o.parts[:0], o.pieces[:0]
	images := false
	for b := lo; b < hi; b++ {
		blk := &x.bl[b]
		switch {
		case blk.kind == xpResult && !folded:
			b += x.attachedCount(b)
		case blk.kind == xpResult:
			o.parts = append(o.parts, xoPart{Type: "text", Text: blk.foldedText()})
		case blk.kind == xpImage:
			images = true
			o.parts = append(o.parts, xoPart{Type: "image_url", ImageURL: &xoImageURL{URL: blk.img.oaURL()}})
		default:
			o.parts = append(o.parts, xoPart{Type: "text", Text: blk.text})
		}
	}
	o.m = xoMessage{Role: "user"}
	if images {
		o.m.Content = &o.parts
		return
	}
	for k := range o.parts {
		o.pieces = append(o.pieces, o.parts[k].Text)
	}
	o.setText("\n\n")
}

func (s *xpImageSource) oaURL() string {
	if s.url != "" {
		return s.url
	}
	return "data:" + s.mediaType + ";base64," + s.data
}

// oaName is an item's name where chat completions takes it.
func (x *xpThread) oaName(i int) string {
	n := x.items[i].Name
	if n == "" || xpValidName(n, 64) {
		return n
	}
	x.note(i, "%s: name %q is not valid (%s): dropped", x.itemRef(i), n, xpNamePattern(64))
	return ""
}

// pairOpenAI pairs each tool message with a call of the last assistant
// message with calls, when only tool messages lie between them; the
// rest are folded.
func (x *xpThread) pairOpenAI() {
	var group []int32
	closeGroup := func() {
		for _, c := range group {
			if x.bl[c].pair < 0 {
				x.foldCall(c)
			}
		}
		group = group[:0]
	}
	for i := range x.xi {
		xi := &x.xi[i]
		if !xi.live() {
			continue
		}
		switch xi.role {
		case model.RoleAssistant:
			closeGroup()
			for b := xi.lo; b < xi.hi; b++ {
				if x.bl[b].kind == xpCall {
					group = append(group, b)
				}
			}
		case model.RoleSystem:
			closeGroup()
		default:
			other := false
			for b := xi.lo; b < xi.hi; b++ {
				switch blk := &x.bl[b]; {
				case blk.kind == xpResult:
					if !x.match(group, b) {
						x.foldResult(b)
					}
				case !blk.attached:
					other = true
				}
			}
			if other {
				closeGroup()
			}
		}
	}
	closeGroup()
}
