// Package frame carries the runner's messages through logs that were never meant to carry data: a
// pod's log and a VM's serial console. Both add noise (timestamps, kernel messages, console
// garbage), may garble or drop a line, and are readable by anyone who can read the log, so every
// message travels as marked, chunked, checksummed and authenticated text lines.
//
// A message with id ID and payload P becomes one header line and one data line per chunk:
//
//	VMBENCH1 <crc> H <ID> <chunks> <hmac>
//	VMBENCH1 <crc> D <ID> <index>/<chunks> <base64>
//
// where:
//   - <crc> is the 8-digit lower-case hex CRC-32 (IEEE) of the rest of the line (the four fields
//     after it, joined by single spaces). It tells a garbled line from an intact one, so that
//     another copy of the line can be used instead and a garbled ID does not invent a message.
//   - <hmac> is the lower-case hex HMAC-SHA256, under the shared key, of ID, a newline and P. The
//     newline keeps (ID, P) pairs from colliding, because an ID never contains one.
//   - The base64 (standard encoding) of P is cut into pieces of at most ChunkChars characters;
//     <index> counts them from 1 and <chunks> is their number (0 for an empty payload, which then
//     has a header only).
//
// Anything may precede the marker on a line or follow the last field after a blank, and carriage
// returns are ignored; a line holding several markers (lines glued together when a newline was
// lost) is read as several lines.
package frame

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"
)

// Marker starts every frame line.
const Marker = "VMBENCH1"

// ChunkChars is the largest number of base64 characters on one data line. With an ID of at most
// MaxIDLen bytes a line stays under 1000 bytes, short enough for any console or log pipeline.
const ChunkChars = 800

// MaxIDLen bounds the length of a message ID.
const MaxIDLen = 128

// MaxChunks bounds the number of data lines of one message (about 50 MB of payload), so that a
// forged header cannot make Scan loop over billions of indices.
const MaxChunks = 1 << 16

const (
	kindHeader = "H"
	kindData   = "D"
)

// Write writes msg as framed lines to w, authenticated with key (HMAC-SHA256), repeat times
// (at least once). VMs use 2 because a serial console can garble a line; Scan then assembles the
// message from whichever copy of each line survived.
func Write(w io.Writer, key []byte, id string, msg []byte, repeat int) error {
	if len(key) == 0 {
		return errors.New("frame: empty key")
	}
	if err := checkID(id); err != nil {
		return err
	}
	if repeat < 1 {
		return fmt.Errorf("frame: repeat must be at least 1, got %d", repeat)
	}
	encoded := base64.StdEncoding.EncodeToString(msg)
	chunks := (len(encoded) + ChunkChars - 1) / ChunkChars
	if chunks > MaxChunks {
		return fmt.Errorf("frame: message %s is too large (%d bytes)", id, len(msg))
	}

	var one bytes.Buffer
	writeLine(&one, kindHeader, id, strconv.Itoa(chunks), hex.EncodeToString(sign(key, id, msg)))
	for i := range chunks {
		piece := encoded[i*ChunkChars : min((i+1)*ChunkChars, len(encoded))]
		writeLine(&one, kindData, id, fmt.Sprintf("%d/%d", i+1, chunks), piece)
	}
	// One Write call for all copies, so that a concurrent writer to the same stream is less likely
	// to split a line.
	if _, err := w.Write(bytes.Repeat(one.Bytes(), repeat)); err != nil {
		return fmt.Errorf("frame: writing message %s: %w", id, err)
	}
	return nil
}

func writeLine(buf *bytes.Buffer, kind, id, count, value string) {
	body := kind + " " + id + " " + count + " " + value
	fmt.Fprintf(buf, "%s %08x %s\n", Marker, crc32.ChecksumIEEE([]byte(body)), body)
}

// checkID rejects IDs that would not survive as one field of a line.
func checkID(id string) error {
	if id == "" {
		return errors.New("frame: empty message id")
	}
	if len(id) > MaxIDLen {
		return fmt.Errorf("frame: message id %.20q... is longer than %d bytes", id, MaxIDLen)
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] >= 0x7f {
			return fmt.Errorf("frame: message id %q must be printable ASCII without spaces", id)
		}
	}
	return nil
}

func sign(key []byte, id string, msg []byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'\n'})
	mac.Write(msg)
	return mac.Sum(nil)
}
