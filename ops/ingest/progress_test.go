package ingest

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"weft/formats/sharegpt"
	"weft/ops/opstest"
	"weft/ops/progress"
)

// An import reports progress through the context as every long call
// does: the messages read so far, going up with each report, the last
// one the whole file. (The file's length is not known until its end:
// the total stays 0.)
func TestImportReportsProgress(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	var done []int
	var reports []string
	ctx := progress.With(context.Background(), func(n, total int, message string) {
		if k := len(done); k > 0 && n <= done[k-1] {
			t.Errorf("progress went from %d to %d (%q)", done[k-1], n, message)
		}
		if total > 0 && n > total {
			t.Errorf("progress %d of %d", n, total)
		}
		done = append(done, n)
		reports = append(reports, fmt.Sprintf("%d/%d %s", n, total, message))
	})
	im := New(ctx, f.Svc, Options{})
	if _, err := sharegpt.Read(bytes.NewReader(readFile(t, "../../formats/testdata/sharegpt/fastchat_dummy_conversation.json")), im); err != nil {
		t.Fatal(err)
	}
	mustClose(t, im)
	if len(done) == 0 || done[len(done)-1] != 2000 {
		t.Fatalf("an import of 2000 messages reported %v", reports)
	}
}
