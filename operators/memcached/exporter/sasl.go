// SASL: a memcached started with -S answers only the binary protocol, and only after a client
// authenticated (ADR 0403). The exporter then authenticates with SASL PLAIN, reading the credentials
// from files at each connection (in the pod: the init container's copies, which match memcached's
// database until the pod rolls, not the live Secret), and asks for
// `stats` in the binary protocol. The password is never logged: errors name the user only.
package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// saslCredentials names the files holding the user and password (a mounted Secret's keys).
type saslCredentials struct {
	usernameFile, passwordFile string
}

// read returns the user and password as memcached's init script stored them: the user without
// trailing newlines (the shell's $(cat)), the password without one trailing newline (saslpasswd2 -p).
func (c *saslCredentials) read() (string, string, error) {
	user, err := os.ReadFile(c.usernameFile)
	if err != nil {
		return "", "", fmt.Errorf("reading the SASL username: %w", err)
	}
	password, err := os.ReadFile(c.passwordFile)
	if err != nil {
		// The path only: os.ReadFile's error never holds the content.
		return "", "", fmt.Errorf("reading the SASL password: %w", err)
	}
	return strings.TrimRight(string(user), "\n"), strings.TrimSuffix(string(password), "\n"), nil
}

// The binary protocol's opcodes and statuses the exporter uses.
const (
	opStat          = 0x10
	opSaslAuth      = 0x21
	statusOK        = 0x0000
	statusAuthError = 0x0020
	requestMagic    = 0x80
	responseMagic   = 0x81
	headerLength    = 24
)

// binaryRequest encodes one request without extras.
func binaryRequest(opcode byte, key, value string) []byte {
	packet := make([]byte, headerLength, headerLength+len(key)+len(value))
	packet[0] = requestMagic
	packet[1] = opcode
	binary.BigEndian.PutUint16(packet[2:], uint16(len(key)))
	binary.BigEndian.PutUint32(packet[8:], uint32(len(key)+len(value)))
	packet = append(packet, key...)
	return append(packet, value...)
}

// binaryResponse is one decoded response packet.
type binaryResponse struct {
	opcode     byte
	status     uint16
	key, value []byte
}

// readBinaryResponse reads one packet from r (a reader bounded by the caller).
func readBinaryResponse(r io.Reader) (binaryResponse, error) {
	var header [headerLength]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		return binaryResponse{}, err
	}
	if header[0] != responseMagic {
		return binaryResponse{}, fmt.Errorf("not a binary-protocol answer (first byte %#x)", header[0])
	}
	keyLength := int(binary.BigEndian.Uint16(header[2:]))
	extrasLength := int(header[4])
	bodyLength := int(binary.BigEndian.Uint32(header[8:]))
	if keyLength+extrasLength > bodyLength || bodyLength > maxAnswerBytes {
		return binaryResponse{}, fmt.Errorf("malformed binary-protocol answer (key %d, extras %d, body %d bytes)", keyLength, extrasLength, bodyLength)
	}
	body := make([]byte, bodyLength)
	if _, err := io.ReadFull(r, body); err != nil {
		return binaryResponse{}, err
	}
	return binaryResponse{
		opcode: header[1],
		status: binary.BigEndian.Uint16(header[6:]),
		key:    body[extrasLength : extrasLength+keyLength],
		value:  body[extrasLength+keyLength:],
	}, nil
}

// authenticate runs SASL PLAIN on rw; the error names the user, never the password.
func authenticate(rw io.ReadWriter, credentials *saslCredentials) error {
	user, password, err := credentials.read()
	if err != nil {
		return err
	}
	if _, err := rw.Write(binaryRequest(opSaslAuth, "PLAIN", "\x00"+user+"\x00"+password)); err != nil {
		return err
	}
	answer, err := readBinaryResponse(&io.LimitedReader{R: rw, N: maxAnswerBytes})
	if err != nil {
		return err
	}
	switch {
	case answer.opcode == opSaslAuth && answer.status == statusOK:
		return nil
	case answer.status == statusAuthError:
		return fmt.Errorf("memcached refused SASL authentication as %q", user)
	default:
		return fmt.Errorf("unexpected answer to SASL authentication: status %#x", answer.status)
	}
}

// binaryStats asks for `stats` in the binary protocol: one packet per statistic, then one with an
// empty key. It reports how many bytes of the answer it read.
func binaryStats(rw io.ReadWriter) (map[string]string, int64, error) {
	if _, err := rw.Write(binaryRequest(opStat, "", "")); err != nil {
		return nil, 0, err
	}
	limited := &io.LimitedReader{R: rw, N: maxAnswerBytes}
	read := func() int64 { return maxAnswerBytes - limited.N }
	stats := make(map[string]string, 96)
	for {
		answer, err := readBinaryResponse(limited)
		if err != nil {
			if limited.N == 0 {
				err = fmt.Errorf("answer to stats longer than %d bytes", maxAnswerBytes)
			}
			return nil, read(), err
		}
		if answer.opcode != opStat {
			return nil, read(), fmt.Errorf("unexpected binary-protocol answer (opcode %#x) to stats", answer.opcode)
		}
		if answer.status == statusAuthError {
			return nil, read(), errors.New("memcached wants SASL authentication first")
		}
		if answer.status != statusOK {
			return nil, read(), fmt.Errorf("memcached answered stats with status %#x", answer.status)
		}
		if len(answer.key) == 0 {
			return stats, read(), nil
		}
		if len(stats) >= maxStats {
			return nil, read(), fmt.Errorf("more than %d fields in the answer to stats", maxStats)
		}
		stats[string(answer.key)] = string(answer.value)
	}
}
