package stacktest

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"syscall"

	"github.com/chatbridge/chat/internal/motoserver"
)

// EnvIAMRecord names a JSON file into which Main merges, when the tests
// end, the distinct calls the IAM check allowed (function, action,
// resource, key prefixes). Several test binaries may write it at once: the
// file is locked while merged. internal/iampolicy's tests read the
// project's record (testdata/calls.json) to show that the check bites and
// to derive docs/iam.md.
const EnvIAMRecord = "STACKTEST_IAM_RECORD"

// RecordedCall is one entry of the record.
type RecordedCall struct {
	Function    string   `json:"function"`
	Action      string   `json:"action"`
	Resource    string   `json:"resource"`
	LeadingKeys []string `json:"leading_keys"`
	// Sites are the adapter functions the call came from, innermost first
	// (iampolicy.SitesHeader); absent for a call of a real bootstrap.
	Sites []string `json:"sites,omitempty"`
}

func (c RecordedCall) key() string {
	return c.Function + " " + c.Action + " " + c.Resource + " " + strings.Join(c.LeadingKeys, ",") + " " + strings.Join(c.Sites, ",")
}

// streamLabel is a stream ARN's label (its creation time): every test's
// table has its own, so the record names the stream as "stream/*" and stays
// the same from run to run.
var streamLabel = regexp.MustCompile(`/stream/[^/]+$`)

// mergeRecord adds calls to the record at path.
func mergeRecord(path string, calls []motoserver.Call) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("stacktest: IAM record: %w", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("stacktest: lock IAM record: %w", err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	b, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("stacktest: IAM record: %w", err)
	}
	var record []RecordedCall
	if len(b) > 0 {
		if err := json.Unmarshal(b, &record); err != nil {
			return fmt.Errorf("stacktest: IAM record %s: %w", path, err)
		}
	}
	seen := map[string]bool{}
	for _, c := range record {
		seen[c.key()] = true
	}
	for _, c := range calls {
		r := RecordedCall{Function: c.Function, Action: c.Action, Resource: streamLabel.ReplaceAllString(c.Resource, "/stream/*"), LeadingKeys: c.LeadingKeys, Sites: c.Sites}
		if !seen[r.key()] {
			seen[r.key()] = true
			record = append(record, r)
		}
	}
	sort.Slice(record, func(i, j int) bool { return record[i].key() < record[j].key() })
	out, err := json.MarshalIndent(record, "", "  ")
	if err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(append(out, '\n'), 0); err != nil {
		return fmt.Errorf("stacktest: write IAM record: %w", err)
	}
	return nil
}
