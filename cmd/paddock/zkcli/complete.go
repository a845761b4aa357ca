package zkcli

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
)

// completeTimeout bounds the getChildren of a path completion.
const completeTimeout = 2 * time.Second

// Complete completes the word that ends line (the text before the
// cursor): a command name for the first word, a znode path for a word
// that starts with "/". It returns the candidates, each the whole
// completed word (a command name followed by a space), sorted, and the
// length in bytes of the word they replace.
func (s *Shell) Complete(ctx context.Context, line string) ([]string, int) {
	start := strings.LastIndexAny(line, " \t") + 1
	word := line[start:]
	if strings.TrimSpace(line[:start]) == "" {
		var out []string
		for _, name := range CommandNames() {
			if strings.HasPrefix(name, word) {
				out = append(out, name+" ")
			}
		}
		return out, len(word)
	}
	if !strings.HasPrefix(word, "/") {
		return nil, 0
	}
	parent, partial := wire.ParentPath(word), wire.BaseName(word)
	if strings.HasSuffix(word, "/") && len(word) > 1 {
		parent, partial = strings.TrimSuffix(word, "/"), ""
	}
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess == nil {
		return nil, 0
	}
	ctx, cancel := context.WithTimeout(ctx, completeTimeout)
	defer cancel()
	children, _, err := sess.conn.Children(ctx, parent)
	if err != nil {
		return nil, 0
	}
	sort.Strings(children)
	var out []string
	for _, c := range children {
		if strings.HasPrefix(c, partial) {
			out = append(out, wire.JoinPath(parent, c))
		}
	}
	return out, len(word)
}
