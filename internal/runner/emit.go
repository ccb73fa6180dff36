package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/vmbench/vmbench/internal/frame"
	"github.com/vmbench/vmbench/internal/runplan"
)

// maxRunInID keeps message IDs within frame.MaxIDLen whatever the run's name.
const maxRunInID = 100

// FrameEmitter returns an Emit function that writes every message as JSON in frames to w,
// authenticated with key and written repeat times. Message IDs are "<run>-<sequence>", counting
// from 1, so that the controller can tell messages apart and drop the copies.
func FrameEmitter(w io.Writer, key []byte, repeat int) func(runplan.Message) error {
	var mu sync.Mutex
	seq := 0
	return func(m runplan.Message) error {
		payload, err := json.Marshal(m)
		if err != nil {
			return err
		}
		run := m.Run
		if run == "" {
			run = "norun"
		}
		mu.Lock()
		defer mu.Unlock()
		seq++
		return frame.Write(w, key, fmt.Sprintf("%.*s-%d", maxRunInID, run, seq), payload, repeat)
	}
}
