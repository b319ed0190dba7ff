module weft

go 1.26

require (
	github.com/sahilm/fuzzy v0.1.3
	github.com/tiktoken-go/tokenizer v0.10.0
	go.etcd.io/bbolt v1.5.0
)

require (
	github.com/dlclark/regexp2/v2 v2.5.1 // indirect
	golang.org/x/sys v0.45.0 // indirect
)
