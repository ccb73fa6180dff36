package frame

import (
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

// Bounds of what Scan holds, whatever the log. A log written by the runner stays far below each; a
// log that passes one is answered with a *LimitError, so that a crafted or runaway log costs a
// failed run and never the reader's memory.
const (
	// window is the most of one line held at a time. A longer line (lines glued together, a
	// console's progress bar) is read in windows that overlap by maxLine, so no frame on it is lost.
	window = 64 << 10
	// MaxMessages bounds the distinct message IDs of one log. A run's runner sends one message per
	// execution plus two; a log with more IDs than this was not written by runners alone.
	MaxMessages = 4096
	// MaxMessageBytes bounds the frame text kept for one message: about 6 MiB of payload, more than
	// a run's tables ConfigMaps keep of one result (tables.MapBudget × tables.MaxMaps).
	MaxMessageBytes = 8 << 20
	// MaxLogBytes bounds the frame text kept for all messages of one log together.
	MaxLogBytes = 16 << 20
	// maxCandidates bounds the distinct intact headers of one message, and the distinct intact
	// pieces of one chunk, that are kept: they only differ when an ID was reused, which Write never
	// does, and Scan tries at most maxCombinations of them anyway.
	maxCandidates = 4
	// maxCorrupt bounds the garbled lines remembered until the end of the log. Past it, a garbled
	// chunk is reported as missing rather than corrupt: the error is the same failure, less precise.
	maxCorrupt = 4096
	// maxErrors bounds the frame errors reported one by one; the rest are counted.
	maxErrors = 10
	// pieceOverhead is what one kept piece costs beyond its text (string and slice headers, map
	// entries), charged against the budgets so that a log of tiny pieces is bounded as well.
	pieceOverhead = 64
)

// LimitError says that a log passed one of Scan's bounds. The messages past the bound were not
// read, so the results of the log are incomplete; Scan still returns the messages it assembled.
type LimitError struct {
	// What was too large, e.g. "message run-1-a-3".
	What string
	// Limit is the bound it passed, e.g. "8 MiB of frames".
	Limit string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("frame: the log is too large to read: %s holds more than %s; what is past that was not read. "+
		"The runner's messages are far smaller: shorten the tool's output (fewer intervals, a smaller range, "+
		"fewer repetitions per run), or find what else writes frames into the log", e.What, e.Limit)
}

// Scan reads a log to its end and returns every message whose frame is complete and authentic, in
// order of first appearance, deduplicated by ID. A complete frame that fails authentication, or an
// ID whose frame never appears complete, is reported in the error (one error per bad ID, the first
// maxErrors of them, joined), while the good messages are still returned. Garbled lines whose ID
// does not appear intact anywhere in the log are ignored: their ID itself may be garbage. A log
// past one of the bounds above gives a *LimitError among the errors.
func Scan(r io.Reader, key []byte) ([]Decoded, error) {
	if len(key) == 0 {
		return nil, errors.New("frame: empty key")
	}
	return ScanKeys(r, func(string) []byte { return key })
}

// ScanKeys is Scan with the key of each message chosen by its ID, so that a reader that knows whose
// keys an ID claims can tell a message of another writer from a forged one. A message whose key is
// empty fails authentication. The log is read in windows of at most 64 KiB: only one window and
// the frames found so far, within the bounds above, are held, however long the log.
func ScanKeys(r io.Reader, keyFor func(id string) []byte) ([]Decoded, error) {
	s := ScanAll(r, keyFor)
	return s.Messages, s.Err()
}

// Failure is one message of a log that could not be used.
type Failure struct {
	ID string
	// Index is the message's place among all the log's message IDs, by first appearance, from 0.
	Index int
	// Incomplete is set when the message's frame was never whole in the log (its header or a chunk
	// missing or garbled); a whole frame that fails authentication is not incomplete.
	Incomplete bool
	Err        error
	// cut holds what the log had of an incomplete message that was the first or the last of the
	// log, where a log that another continues cuts frames, for JoinCut.
	cut *message
}

// Scanned is everything ScanAll found in one log.
type Scanned struct {
	// Messages are the complete and authentic messages, in order of first appearance.
	Messages []Decoded
	// Failures are the messages that could not be used, in order of first appearance.
	Failures []Failure
	// IDs is the number of distinct message IDs in the log, good and failed.
	IDs int
	// ReadErr broke off the log; Limit is the first bound the log passed (a *LimitError).
	ReadErr, Limit error
}

// Err joins the read error, the limit passed and the failures (the first maxErrors of them, then
// their count) as ScanKeys reports them.
func (s Scanned) Err() error {
	return JoinFailures(s.ReadErr, s.Limit, s.Failures)
}

// JoinFailures joins errors and the errors of failures, naming at most maxErrors failures one by
// one and counting the rest.
func JoinFailures(readErr, limit error, failures []Failure) error {
	errs := []error{readErr, limit}
	for i, f := range failures {
		if i == maxErrors {
			errs = append(errs, fmt.Errorf("frame: %d more messages failed in the same log", len(failures)-maxErrors))
			break
		}
		errs = append(errs, f.Err)
	}
	return errors.Join(errs...)
}

// ScanAll is ScanKeys that keeps each failed message apart, with whether its frame was incomplete
// and where it first appeared, so that a reader of several logs of one writer (a VM's serial
// console before and after a live migration) can tell a frame cut where one log ends from a
// corrupt one.
func ScanAll(r io.Reader, keyFor func(id string) []byte) Scanned {
	s := scanner{messages: map[string]*message{}}
	readErr := s.read(r)
	s.attributeCorrupt()

	ordered := make([]*message, 0, len(s.messages))
	for _, m := range s.messages {
		ordered = append(ordered, m)
	}
	slices.SortFunc(ordered, func(a, b *message) int { return a.first - b.first })

	out := Scanned{IDs: len(ordered), ReadErr: readErr, Limit: s.limit}
	for i, m := range ordered {
		key := keyFor(m.id)
		if len(key) == 0 {
			out.Failures = append(out.Failures, Failure{ID: m.id, Index: i, Err: fmt.Errorf("frame %s: no key", m.id)})
			continue
		}
		if m.overflow {
			continue // the LimitError names it
		}
		payload, err := m.decode(key)
		if err != nil {
			f := Failure{ID: m.id, Index: i, Incomplete: !errors.Is(err, errMismatch), Err: fmt.Errorf("frame %s: %w", m.id, err)}
			if f.Incomplete && (i == 0 || i == len(ordered)-1) {
				f.cut = m
			}
			out.Failures = append(out.Failures, f)
			continue
		}
		out.Messages = append(out.Messages, Decoded{ID: m.id, Payload: payload})
	}
	return out
}

// JoinCut assembles one message from the pieces that several logs held of it, each incomplete: a
// frame that one log's end cut and the next log's start continued (a VM's serial console before
// and after a live migration). Only failures of the first or last message of their log carry their
// pieces; it fails when none or one does, or when the pieces together are still incomplete or
// fail authentication under key.
func JoinCut(key []byte, parts ...Failure) (Decoded, error) {
	joined := &message{pieces: map[int]map[int][]string{}, corruptChunk: map[int]bool{}}
	n := 0
	for _, f := range parts {
		m := f.cut
		if m == nil || (joined.id != "" && m.id != joined.id) {
			continue
		}
		n++
		joined.id = m.id
		joined.corruptHeader = joined.corruptHeader || m.corruptHeader
		for i, c := range m.corruptChunk {
			joined.corruptChunk[i] = joined.corruptChunk[i] || c
		}
		for _, h := range m.headers {
			if joined.takesHeader(h) {
				joined.headers = append(joined.headers, h)
			}
		}
		for chunks, byIndex := range m.pieces {
			for i, values := range byIndex {
				for _, v := range values {
					if joined.takesPiece(chunks, i, v) {
						joined.addPiece(chunks, i, v)
					}
				}
			}
		}
	}
	if n < 2 {
		return Decoded{}, errors.New("frame: fewer than two logs hold pieces of the message")
	}
	payload, err := joined.decode(key)
	if err != nil {
		return Decoded{}, fmt.Errorf("frame %s: %w", joined.id, err)
	}
	return Decoded{ID: joined.id, Payload: payload}, nil
}

// read feeds the log to s line by line, a long line window by window, with carriage returns
// dropped. It returns the error that broke off the log, if any.
func (s *scanner) read(r io.Reader) error {
	buf := make([]byte, window)
	n := 0        // bytes held in buf
	searched := 0 // buf[:searched] holds no newline
	eof := false
	var readErr error
	for pos := 0; ; {
		if i := bytes.IndexByte(buf[searched:n], '\n'); i >= 0 {
			end := searched + i
			s.line(pos, string(buf[:end]), end)
			pos++
			n = copy(buf, buf[end+1:n])
			searched = 0
			continue
		}
		searched = n
		switch {
		case eof:
			if n > 0 {
				s.line(pos, string(buf[:n]), n)
			}
			return readErr
		case n == len(buf):
			// A window without a newline: read the frames that start early enough to lie whole
			// inside it, and keep the rest for the next window of the same line.
			cut := n - maxLine
			s.line(pos, string(buf[:n]), cut)
			n = copy(buf, buf[cut:n])
			searched = n
			continue
		}
		m, err := r.Read(buf[n:])
		n += dropCR(buf[n : n+m])
		if err != nil {
			eof = true
			if err != io.EOF {
				readErr = fmt.Errorf("frame: reading log: %w", err)
			}
		}
	}
}

// dropCR removes carriage returns from b in place and returns the length left.
func dropCR(b []byte) int {
	k := 0
	for _, c := range b {
		if c != '\r' {
			b[k] = c
			k++
		}
	}
	return k
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
	// bytes is the frame text kept for the message, with pieceOverhead per piece; overflow is set
	// once it would pass MaxMessageBytes, and nothing more is kept.
	bytes    int
	overflow bool
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
	// bytes is the frame text kept for all messages, as message.bytes counts it.
	bytes int
	// limit is the first bound the log passed.
	limit error
}

// message returns the message of id, creating it unless that would pass MaxMessages (then nil).
func (s *scanner) message(id string, pos int) *message {
	m, ok := s.messages[id]
	if !ok {
		if len(s.messages) >= MaxMessages {
			s.passed(&LimitError{What: "the log", Limit: fmt.Sprintf("%d distinct messages", MaxMessages)})
			return nil
		}
		// The ID is cloned: it points into the line, which must not stay alive with it.
		id = strings.Clone(id)
		m = &message{id: id, first: pos, pieces: map[int]map[int][]string{}, corruptChunk: map[int]bool{}}
		s.messages[id] = m
	}
	return m
}

// charge counts n more bytes kept for m; it reports false, and keeps nothing, when that would pass
// a bound.
func (s *scanner) charge(m *message, n int) bool {
	switch {
	case m.overflow:
		return false
	case m.bytes+n > MaxMessageBytes:
		m.overflow = true
		s.passed(&LimitError{What: "message " + m.id, Limit: fmt.Sprintf("%d MiB of frames", MaxMessageBytes>>20)})
		return false
	case s.bytes+n > MaxLogBytes:
		s.passed(&LimitError{What: "the log", Limit: fmt.Sprintf("%d MiB of frames", MaxLogBytes>>20)})
		return false
	}
	m.bytes += n
	s.bytes += n
	return true
}

func (s *scanner) passed(err error) {
	if s.limit == nil {
		s.limit = err
	}
}

// line reads the frame lines starting at every marker on a line, or on a window of a long line,
// that starts before limit: when a newline was lost, the first frame line swallows the next one
// and fails its checksum, while the next one still parses.
func (s *scanner) line(pos int, line string, limit int) {
	for off := 0; off < limit; {
		i := strings.Index(line[off:], Marker)
		if i < 0 || off+i >= limit {
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
	// A marker glued to what follows is no frame: answer at once, so that a line of glued markers
	// costs no scan of maxLine bytes per marker.
	if rest := strings.TrimPrefix(text, Marker); rest != text && rest != "" && strings.IndexByte(" \t\v\f", rest[0]) < 0 {
		return nil
	}
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
		if m == nil {
			return true
		}
		h := header{chunks: chunks, mac: value}
		if m.takesHeader(h) && s.charge(m, len(value)+pieceOverhead) {
			h.mac = strings.Clone(value)
			m.headers = append(m.headers, h)
		}
		return true
	case kindData:
		index, chunks, ok := parseIndex(count)
		if !ok || len(value) > ChunkChars {
			return false
		}
		m := s.message(id, pos)
		if m == nil {
			return true
		}
		if m.takesPiece(chunks, index, value) && s.charge(m, len(value)+pieceOverhead) {
			// The piece is cloned: it points into the line, which must not stay alive with it.
			m.addPiece(chunks, index, strings.Clone(value))
		}
		return true
	}
	return false
}

func (s *scanner) recordCorrupt(pos int, f []string) {
	if len(s.corrupt) >= maxCorrupt {
		return
	}
	c := corruptLine{pos: pos}
	if len(f) > 2 && (f[2] == kindHeader || f[2] == kindData) {
		c.kind = f[2]
	}
	if len(f) > 3 && len(f[3]) <= MaxIDLen {
		c.id = strings.Clone(f[3])
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
	return nil, errMismatch
}

// takesHeader reports whether h is a header the message does not hold yet and has room for: at most
// maxCandidates distinct ones.
func (m *message) takesHeader(h header) bool {
	return !slices.Contains(m.headers, h) && len(m.headers) < maxCandidates
}

// takesPiece reports whether value is a piece of chunk index (of a frame of chunks chunks) that the
// message does not hold yet and has room for: at most maxCandidates distinct ones per chunk.
func (m *message) takesPiece(chunks, index int, value string) bool {
	byIndex := m.pieces[chunks]
	return !slices.Contains(byIndex[index], value) && len(byIndex[index]) < maxCandidates
}

// addPiece keeps value as a candidate for chunk index of a frame of chunks chunks.
func (m *message) addPiece(chunks, index int, value string) {
	byIndex := m.pieces[chunks]
	if byIndex == nil {
		byIndex = map[int][]string{}
		m.pieces[chunks] = byIndex
	}
	byIndex[index] = append(byIndex[index], value)
}

// errMismatch is a whole frame that fails authentication.
var errMismatch = errors.New("checksum mismatch")

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
