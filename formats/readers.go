package formats

// readers maps each format to its importer.
var readers = map[Format]Reader{
	ClaudeCode: ReadClaudeCode,
	ChatGPT:    ReadChatGPT,
	Codex:      ReadCodex,
	OpenAI:     ReadOpenAI,
	ShareGPT:   ReadShareGPT,
	Weft:       ReadWeft,
}

// ReaderFor returns the importer of a format.
func ReaderFor(f Format) (Reader, bool) {
	r, ok := readers[f]
	return r, ok
}
