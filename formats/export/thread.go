// Package export writes threads out: as the request bodies model
// providers take (OpenAI chat completions, Anthropic Messages), kept
// valid whatever the operations did to the thread, and as a readable
// Markdown transcript.
package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"weft/formats"
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
	items  []formats.Item
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

// dropNote takes back the latest note on item.
func (x *xpThread) dropNote(item int) {
	for k := len(x.notes) - 1; k >= 0; k-- {
		if x.notes[k].item == item {
			x.notes = append(x.notes[:k], x.notes[k+1:]...)
			return
		}
	}
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
func xpRole(it *formats.Item) model.Role {
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

func xpRead(items []formats.Item, target xpTarget) *xpThread {
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
				if _, ok := x.callName(p.ToolCallID); !ok {
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
func (x *xpThread) readToolParts(i int, it *formats.Item) {
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
		b.args = compactString(p.Input)
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
	name, _ := x.callName(p.ToolCallID)
	return name
}

// callID is the ID a call is exported with: its own where it has a
// usable one, else a generated one; unique in the document.
func (x *xpThread) callID(i, k int, orig string) string {
	id := orig
	if x.target == xpAnthropic && id != "" && !xpValidName(id, 1<<20) {
		id = xpSanitize(id, 1<<20)
	}
	if id == "" || x.isUsed(id) {
		base := id
		if base == "" {
			prefix := "call_"
			if x.target == xpAnthropic {
				prefix = "toolu_"
			}
			base = prefix + xpSanitize(string(x.items[i].ID), 1<<20) + "_" + strconv.Itoa(k)
		}
		id = base
		for n := 2; x.taken(i, id, orig); n++ {
			id = base + "_" + strconv.Itoa(n)
		}
	}
	x.used[id] = struct{}{}
	return id
}

// taken reports whether id, an ID item i's call may get, is given out
// already, or is the stored ID of another call (which may come later:
// the look-up is noted in probes).
func (x *xpThread) taken(i int, id, orig string) bool {
	if x.isUsed(id) {
		return true
	}
	if id == orig {
		return false
	}
	_, ok := x.callName(id)
	return ok
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
	if in := compactString(input); in != "" && in != "{}" {
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
	if b.orig != "" && x.hasResult(b.orig) {
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
	if _, ok := x.callName(b.orig); ok {
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
			_ = json.Unmarshal(raw.ImageURL, &o)
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

// compactString is raw JSON compacted, as a string.
func compactString(raw []byte) string { return string(formats.Compact(raw)) }

// callName is the tool name of the thread's first call with the given
// ID, and whether there is one.
func (x *xpThread) callName(id string) (string, bool) {
	name, ok := x.calls[id]
	return name, ok
}

// hasResult reports whether a result in the thread answers the call ID.
func (x *xpThread) hasResult(id string) bool {
	_, ok := x.results[id]
	return ok
}

// isUsed reports whether a call was given the ID already.
func (x *xpThread) isUsed(id string) bool {
	_, ok := x.used[id]
	return ok
}
