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
const maxRunInID = 100 - maxSessionLen

// maxSessionLen bounds the session part of a message ID.
const maxSessionLen = 16

// FrameEmitter returns an Emit function that writes every message as JSON in frames to w,
// authenticated with key and written repeat times. Message IDs are "<run>-<session>-<sequence>",
// counting from 1: the controller drops the copies of one message by ID, and a runner started again
// in the same log (a rebooted VM) needs a new session so that its messages are not taken for copies.
func FrameEmitter(w io.Writer, key []byte, repeat int, session string) func(runplan.Message) error {
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
		return frame.Write(w, key, fmt.Sprintf("%.*s-%s-%d", maxRunInID, run, session, seq), payload, repeat)
	}
}
