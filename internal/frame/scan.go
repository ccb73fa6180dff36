package frame

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Decoded is one message found in a log.
type Decoded struct {
	ID      string
	Payload []byte
}

// maxCombinations bounds how many ways of picking among differing intact copies of the same chunk
// Scan tries before it gives up on a message. Intact copies of one chunk only differ when one ID
// was reused for different payloads, which the runner never does, so a small bound suffices.
const maxCombinations = 16

// maxLine is more than the longest line Write produces.
const maxLine = 2 * (ChunkChars + MaxIDLen + 64)

// Scan reads a log to its end and returns every message whose frame is complete and authentic, in
// order of first appearance, deduplicated by ID. A complete frame that fails authentication, or an
// ID whose frame never appears complete, is reported in the error (one error per bad ID, joined),
// while the good messages are still returned. Garbled lines whose ID does not appear intact
// anywhere in the log are ignored: their ID itself may be garbage.
func Scan(r io.Reader, key []byte) ([]Decoded, error) {
	if len(key) == 0 {
		return nil, errors.New("frame: empty key")
	}
	return ScanKeys(r, func(string) []byte { return key })
}

// ScanKeys is Scan with the key of each message chosen by its ID, so that a reader that knows whose
// keys an ID claims can tell a message of another writer from a forged one. A message whose key is
// empty fails authentication. The log is read line by line: only one line and the frames found so
// far are held, however long the log.
func ScanKeys(r io.Reader, keyFor func(id string) []byte) ([]Decoded, error) {
	s := scanner{messages: map[string]*message{}}
	br := bufio.NewReaderSize(r, 64<<10)
	var readErr error
	for pos := 0; ; pos++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 || err == nil {
			s.line(pos, string(bytes.ReplaceAll(bytes.TrimSuffix(line, []byte{'\n'}), []byte{'\r'}, nil)))
		}
		if err != nil {
			if err != io.EOF {
				readErr = fmt.Errorf("frame: reading log: %w", err)
			}
			break
		}
	}
	s.attributeCorrupt()

	ordered := make([]*message, 0, len(s.messages))
	for _, m := range s.messages {
		ordered = append(ordered, m)
	}
	slices.SortFunc(ordered, func(a, b *message) int { return a.first - b.first })

	var out []Decoded
	errs := []error{readErr}
	for _, m := range ordered {
		key := keyFor(m.id)
		if len(key) == 0 {
			errs = append(errs, fmt.Errorf("frame %s: no key", m.id))
			continue
		}
		payload, err := m.decode(key)
		if err != nil {
			errs = append(errs, fmt.Errorf("frame %s: %w", m.id, err))
			continue
		}
		out = append(out, Decoded{ID: m.id, Payload: payload})
	}
	return out, errors.Join(errs...)
}

type header struct {
	chunks int
	mac    string
}

// message gathers every intact line seen for one ID.
type message struct {
	id    string
	first int
	// headers and pieces hold distinct intact values only: repeated copies add nothing.
	headers []header
	// pieces[chunks][index] lists the distinct intact base64 pieces for that position.
	pieces map[int]map[int][]string
	// corruptHeader and corruptChunk record garbled lines, to tell "corrupt" from "missing".
	corruptHeader bool
	corruptChunk  map[int]bool
}

// corruptLine is a garbled line, kept until the whole log is read because only then is it known
// whether its ID is real.
type corruptLine struct {
	pos   int
	id    string
	kind  string
	index int
}

type scanner struct {
	messages map[string]*message
	corrupt  []corruptLine
}

func (s *scanner) message(id string, pos int) *message {
	m, ok := s.messages[id]
	if !ok {
		m = &message{id: id, first: pos, pieces: map[int]map[int][]string{}, corruptChunk: map[int]bool{}}
		s.messages[id] = m
	}
	return m
}

// line reads the frame lines starting at every marker on a line: when a newline was lost, the
// first frame line swallows the next one and fails its checksum, while the next one still parses.
func (s *scanner) line(pos int, line string) {
	for off := 0; ; {
		i := strings.Index(line[off:], Marker)
		if i < 0 {
			return
		}
		s.frameLine(pos, line[off+i:])
		off += i + len(Marker)
	}
}

func (s *scanner) frameLine(pos int, text string) {
	f := leadingFields(text, 6)
	if len(f) == 0 || f[0] != Marker {
		return
	}
	if len(f) < 6 || !crcMatches(f[1], strings.Join(f[2:6], " ")) || !s.intact(pos, f[2], f[3], f[4], f[5]) {
		s.recordCorrupt(pos, f)
	}
}

// leadingFields returns up to n blank-separated fields from the start of text. It never looks
// beyond maxLine bytes (more than any frame line) nor past the n-th field, so that a line full of
// markers does not cost quadratic time.
func leadingFields(text string, n int) []string {
	text = text[:min(len(text), maxLine)]
	var f []string
	for len(f) < n {
		text = strings.TrimLeft(text, " \t\v\f")
		if text == "" {
			break
		}
		end := strings.IndexAny(text, " \t\v\f")
		if end < 0 {
			end = len(text)
		}
		f = append(f, text[:end])
		text = text[end:]
	}
	return f
}

func crcMatches(field, body string) bool {
	if len(field) != 8 || strings.ToLower(field) != field {
		return false
	}
	want, err := strconv.ParseUint(field, 16, 32)
	return err == nil && uint32(want) == crc32.ChecksumIEEE([]byte(body))
}

// intact records a line whose checksum matched; it reports false when the fields still make no
// sense, which only a writer other than Write can produce.
func (s *scanner) intact(pos int, kind, id, count, value string) bool {
	if checkID(id) != nil {
		return false
	}
	switch kind {
	case kindHeader:
		chunks, ok := parseCount(count, true)
		if !ok || chunks > MaxChunks || len(value) != 2*32 || strings.ToLower(value) != value {
			return false
		}
		if _, err := hex.DecodeString(value); err != nil {
			return false
		}
		m := s.message(id, pos)
		h := header{chunks: chunks, mac: value}
		if !slices.Contains(m.headers, h) {
			m.headers = append(m.headers, h)
		}
		return true
	case kindData:
		index, chunks, ok := parseIndex(count)
		if !ok || len(value) > ChunkChars {
			return false
		}
		m := s.message(id, pos)
		byIndex := m.pieces[chunks]
		if byIndex == nil {
			byIndex = map[int][]string{}
			m.pieces[chunks] = byIndex
		}
		if !slices.Contains(byIndex[index], value) {
			byIndex[index] = append(byIndex[index], value)
		}
		return true
	}
	return false
}

func (s *scanner) recordCorrupt(pos int, f []string) {
	c := corruptLine{pos: pos}
	if len(f) > 2 {
		c.kind = f[2]
	}
	if len(f) > 3 {
		c.id = f[3]
	}
	if len(f) > 4 && c.kind == kindData {
		c.index, _, _ = parseIndex(f[4])
	}
	s.corrupt = append(s.corrupt, c)
}

// attributeCorrupt charges garbled lines to the messages whose ID appears intact elsewhere.
func (s *scanner) attributeCorrupt() {
	for _, c := range s.corrupt {
		m, ok := s.messages[c.id]
		if !ok {
			continue
		}
		m.first = min(m.first, c.pos)
		switch c.kind {
		case kindHeader:
			m.corruptHeader = true
		case kindData:
			if c.index > 0 {
				m.corruptChunk[c.index] = true
			}
		}
	}
}

// decode assembles and authenticates the message, trying every distinct intact header.
func (m *message) decode(key []byte) ([]byte, error) {
	if len(m.headers) == 0 {
		if m.corruptHeader {
			return nil, errors.New("header corrupt")
		}
		return nil, errors.New("header missing")
	}
	var firstErr error
	for _, h := range m.headers {
		payload, err := m.assemble(h, key)
		if err == nil {
			return payload, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

func (m *message) assemble(h header, key []byte) ([]byte, error) {
	byIndex := m.pieces[h.chunks]
	var gaps []string
	for i := 1; i <= h.chunks; i++ {
		if len(byIndex[i]) > 0 {
			continue
		}
		if len(gaps) == 3 {
			gaps = append(gaps, "...")
			break
		}
		state := "missing"
		if m.corruptChunk[i] {
			state = "corrupt"
		}
		gaps = append(gaps, fmt.Sprintf("chunk %d of %d %s", i, h.chunks, state))
	}
	if len(gaps) > 0 {
		return nil, errors.New(strings.Join(gaps, ", "))
	}

	want, _ := hex.DecodeString(h.mac)
	choice := make([]int, h.chunks+1)
	var b strings.Builder
	for range maxCombinations {
		b.Reset()
		for i := 1; i <= h.chunks; i++ {
			b.WriteString(byIndex[i][choice[i]])
		}
		payload, err := base64.StdEncoding.DecodeString(b.String())
		if err == nil && hmac.Equal(sign(key, m.id, payload), want) {
			return payload, nil
		}
		if !nextChoice(choice, byIndex) {
			break
		}
	}
	return nil, errors.New("checksum mismatch")
}

// nextChoice advances choice like an odometer over the candidates of each index; it reports
// false once every combination was tried.
func nextChoice(choice []int, byIndex map[int][]string) bool {
	for i := 1; i < len(choice); i++ {
		if choice[i]+1 < len(byIndex[i]) {
			choice[i]++
			return true
		}
		choice[i] = 0
	}
	return false
}

// parseIndex parses "<index>/<chunks>" with 1 <= index <= chunks <= MaxChunks.
func parseIndex(s string) (index, chunks int, ok bool) {
	a, b, found := strings.Cut(s, "/")
	if !found {
		return 0, 0, false
	}
	index, okA := parseCount(a, false)
	chunks, okB := parseCount(b, false)
	if !okA || !okB || index > chunks || chunks > MaxChunks {
		return 0, 0, false
	}
	return index, chunks, true
}

// parseCount parses a decimal count made of digits only, without leading zeros, so that a number
// has exactly one spelling.
func parseCount(s string, allowZero bool) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	if n == 0 && !allowZero {
		return 0, false
	}
	return n, true
}
