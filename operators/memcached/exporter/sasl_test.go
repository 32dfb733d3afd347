// The SASL path against fake memcached servers on loopback: what is sent, what is refused, and
// that a misbehaving binary answer is bounded like a text one. The real memcached -S is in
// memcached-exporter.memcached.integration.test.ts. Run by go-tests.test.ts, or: go test -v .
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func credentialFiles(t *testing.T, user, password string) *saslCredentials {
	t.Helper()
	dir := t.TempDir()
	c := &saslCredentials{usernameFile: filepath.Join(dir, "username"), passwordFile: filepath.Join(dir, "password")}
	if err := os.WriteFile(c.usernameFile, []byte(user), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.passwordFile, []byte(password), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// readRequest reads one binary request and returns its opcode, key and value.
func readRequest(r io.Reader) (byte, string, string, error) {
	var header [headerLength]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		return 0, "", "", err
	}
	keyLength := int(binary.BigEndian.Uint16(header[2:]))
	body := make([]byte, binary.BigEndian.Uint32(header[8:]))
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, "", "", err
	}
	return header[1], string(body[:keyLength]), string(body[keyLength:]), nil
}

func response(opcode byte, status uint16, key, value string) []byte {
	packet := make([]byte, headerLength, headerLength+len(key)+len(value))
	packet[0] = responseMagic
	packet[1] = opcode
	binary.BigEndian.PutUint16(packet[2:], uint16(len(key)))
	binary.BigEndian.PutUint16(packet[6:], status)
	binary.BigEndian.PutUint32(packet[8:], uint32(len(key)+len(value)))
	return append(append(packet, key...), value...)
}

// The credentials go as PLAIN's "\0user\0password", trimmed as saslpasswd2 -p stored them (one
// trailing newline off the password), and stats come back as packets up to the empty key.
func TestSaslPlainThenBinaryStats(t *testing.T) {
	sent := make(chan string, 1)
	address := fakeMemcached(t, func(conn net.Conn) {
		r := bufio.NewReader(conn)
		opcode, mechanism, payload, err := readRequest(r)
		if err != nil || opcode != opSaslAuth || mechanism != "PLAIN" {
			return
		}
		sent <- payload
		conn.Write(response(opSaslAuth, statusOK, "", "Authenticated"))
		if opcode, _, _, err := readRequest(r); err != nil || opcode != opStat {
			return
		}
		conn.Write(append(append(response(opStat, statusOK, "uptime", "42"), response(opStat, statusOK, "version", "1.6.45")...),
			response(opStat, statusOK, "", "")...))
		time.Sleep(time.Second)
	})
	source := &statsSource{address: address, timeout: 2 * time.Second, sasl: credentialFiles(t, "shop\n", "pass word\n\n")}
	stats, err := source.read()
	if err != nil {
		t.Fatal(err)
	}
	if got := <-sent; got != "\x00shop\x00pass word\n" {
		t.Errorf("PLAIN payload %q, want the user without newlines and the password without its last one", got)
	}
	if stats["uptime"] != "42" || stats["version"] != "1.6.45" || len(stats) != 2 {
		t.Errorf("stats %v", stats)
	}
}

// A refused login is an error that names the user and never holds the password.
func TestSaslRefusalNamesTheUserOnly(t *testing.T) {
	address := fakeMemcached(t, func(conn net.Conn) {
		if _, _, _, err := readRequest(conn); err != nil {
			return
		}
		conn.Write(response(opSaslAuth, statusAuthError, "", "Auth failure"))
	})
	source := &statsSource{address: address, timeout: 2 * time.Second, sasl: credentialFiles(t, "shop", "hunter2")}
	_, err := source.read()
	if err == nil || !strings.Contains(err.Error(), `"shop"`) || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %v: want one naming the user and not the password", err)
	}
}

// An endless run of stat packets is refused at the same 1 MiB bound as the text answer.
func TestEndlessBinaryStatsAreBounded(t *testing.T) {
	address := fakeMemcached(t, func(conn net.Conn) {
		r := bufio.NewReader(conn)
		if _, _, _, err := readRequest(r); err != nil {
			return
		}
		conn.Write(response(opSaslAuth, statusOK, "", ""))
		if _, _, _, err := readRequest(r); err != nil {
			return
		}
		conn.SetWriteDeadline(time.Now().Add(3 * time.Second))
		packet := response(opStat, statusOK, "k", string(bytes.Repeat([]byte("v"), 1000)))
		for i := 0; i < 20_000; i++ {
			if _, err := conn.Write(packet); err != nil {
				return
			}
		}
	})
	source := &statsSource{address: address, timeout: 2 * time.Second, sasl: credentialFiles(t, "shop", "pw")}
	if _, err := source.read(); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("error %v: want the answer refused at the size bound", err)
	}
}
