package platform

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"

	"golang.org/x/crypto/ssh"
	"k8s.io/apimachinery/pkg/types"
)

// Keys of a run's auth Secret.
const (
	// AuthTokenKey holds the key that authenticates the runner's result frames.
	AuthTokenKey = "token"
	// AuthSSHPrivateKey and AuthSSHPublicKey are the key pair the master of a VM run uses to reach its
	// nodes. MPIJobs get their own keys from the MPI Operator.
	AuthSSHPrivateKey = "ssh-privatekey"
	AuthSSHPublicKey  = "ssh-publickey"
	// AuthSSHHostKey is the host key of every sshd of the run (its pods' or VMs'), and AuthKnownHosts
	// the known_hosts file that pins it for every ssh client of the run (the runner's and mpirun's).
	AuthSSHHostKey = "ssh-host-key"
	AuthKnownHosts = "known_hosts"
)

// MasterKeySize is the size of a master key in bytes, and the least a master key may have.
const MasterKeySize = 32

// Auth is what one run needs to authenticate: the token of its frames, the host key of its nodes'
// sshd with the known_hosts that pins it and, for VM runs, the SSH key pair of its master.
type Auth struct {
	Token         []byte
	SSHPrivateKey []byte
	SSHPublicKey  []byte
	// SSHHostKey is an ed25519 private key in OpenSSH's format; SSHHostPublicKey is its public key
	// in authorized_keys format.
	SSHHostKey       []byte
	SSHHostPublicKey []byte
	// KnownHosts is a known_hosts file that accepts the host key, and no other, for every host name.
	KnownHosts []byte
}

// Data is the Secret data of an Auth: the keys it has.
func (a Auth) Data() map[string][]byte {
	out := map[string][]byte{AuthTokenKey: a.Token}
	if len(a.SSHPrivateKey) > 0 {
		out[AuthSSHPrivateKey] = a.SSHPrivateKey
		out[AuthSSHPublicKey] = a.SSHPublicKey
	}
	if len(a.SSHHostKey) > 0 {
		out[AuthSSHHostKey] = a.SSHHostKey
		out[AuthKnownHosts] = a.KnownHosts
	}
	return out
}

// MasterKey is the one secret the manager holds, in its own namespace. Every run's keys are derived
// from it, so the manager never has to read them back from the run's namespace: a suite's key is
// HMAC-SHA256(master, suite UID) and a run's is HMAC-SHA256(suite key, run name). The suite's UID
// makes a suite re-created under the same name get new keys, and the run's name makes a frame of one
// run fail authentication in any other.
type MasterKey []byte

// Validate refuses a master key too short to derive keys from.
func (m MasterKey) Validate() error {
	if len(m) < MasterKeySize {
		return fmt.Errorf("the master key has %d bytes, want at least %d", len(m), MasterKeySize)
	}
	return nil
}

// RunAuth derives a run's keys: its frame token, the host key of its nodes' sshd with its
// known_hosts and, with clientKey, the SSH key pair of its master (VM runs; the MPI Operator makes
// the pods' own).
func (m MasterKey) RunAuth(suite types.UID, run string, clientKey bool) (Auth, error) {
	runKey, err := m.runKey(suite, run)
	if err != nil {
		return Auth{}, err
	}
	a := Auth{Token: frameToken(runKey)}
	hostKey, hostPub, err := derivedSSHKey(runKey, "ssh host ed25519 seed", "ssh host check", "vmbench "+run+" host key")
	if err != nil {
		return Auth{}, err
	}
	a.SSHHostKey, a.SSHHostPublicKey = hostKey, hostPub
	a.KnownHosts = KnownHosts(hostPub)
	if clientKey {
		if a.SSHPrivateKey, a.SSHPublicKey, err = derivedSSHKey(runKey, "ssh ed25519 seed", "ssh check", "vmbench "+run); err != nil {
			return Auth{}, err
		}
	}
	return a, nil
}

// RunToken derives only a run's frame token: what reading a run's log needs.
func (m MasterKey) RunToken(suite types.UID, run string) ([]byte, error) {
	runKey, err := m.runKey(suite, run)
	if err != nil {
		return nil, err
	}
	return frameToken(runKey), nil
}

func (m MasterKey) runKey(suite types.UID, run string) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if suite == "" || run == "" {
		return nil, errors.New("deriving run keys: the suite's UID and the run's name must be known")
	}
	return mac(mac(m, "suite", string(suite)), "run", run), nil
}

// HistoryKey derives the key that signs the history records of the schedule of that UID, under a
// label of its own, so that it is unrelated to every run's keys and a record of one schedule does
// not verify in another's history.
func (m MasterKey) HistoryKey(schedule types.UID) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if schedule == "" {
		return nil, errors.New("deriving a history key: the schedule's UID must be known")
	}
	return mac(m, "schedule history", string(schedule)), nil
}

func frameToken(runKey []byte) []byte { return []byte(hex.EncodeToString(mac(runKey, "frame token"))) }

// derivedSSHKey derives an ed25519 key from the run's key, its seed and its check bytes under labels
// of their own, so that the client key and the host key are unrelated: the private key in OpenSSH's
// format and the public key in authorized_keys format.
func derivedSSHKey(runKey []byte, seedLabel, checkLabel, comment string) (private, public []byte, err error) {
	priv := ed25519.NewKeyFromSeed(mac(runKey, seedLabel)[:ed25519.SeedSize])
	check := binary.BigEndian.Uint32(mac(runKey, checkLabel))
	sshPub, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the SSH public key: %w", err)
	}
	return pem.EncodeToMemory(openSSHPrivateKey(priv, comment, check)), ssh.MarshalAuthorizedKey(sshPub), nil
}

// KnownHosts is a known_hosts file that accepts the host key (in authorized_keys format) for every
// host name and address, "[name]:port" forms included: each run has its own file, whose only hosts
// are the run's nodes, which the runner and mpirun dial under several names (the Service's full
// names, short names, addresses).
func KnownHosts(hostPublicKey []byte) []byte {
	return append([]byte("* "), hostPublicKey...)
}

// mac is HMAC-SHA256 under key of the fields, each preceded by its length, so that no two lists of
// fields give the same input.
func mac(key []byte, fields ...string) []byte {
	h := hmac.New(sha256.New, key)
	for _, f := range fields {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
	return h.Sum(nil)
}

// openSSHPrivateKey encodes an ed25519 key in OpenSSH's own format (PROTOCOL.key in OpenSSH's
// sources), unencrypted. x/crypto/ssh writes the same format with random check bytes; here they are
// given, so that the same key always gives the same bytes and re-applying a run's Secret changes
// nothing.
func openSSHPrivateKey(priv ed25519.PrivateKey, comment string, check uint32) *pem.Block {
	pub := priv.Public().(ed25519.PublicKey)
	pubBlob := ssh.Marshal(struct {
		KeyType string
		Pub     []byte
	}{ssh.KeyAlgoED25519, pub})
	secret := ssh.Marshal(struct {
		Check1, Check2 uint32
		KeyType        string
		Pub            []byte
		Priv           []byte
		Comment        string
	}{check, check, ssh.KeyAlgoED25519, pub, priv, comment})
	// Unencrypted keys are padded to a multiple of 8 with 1, 2, 3, ...
	for i := byte(1); len(secret)%8 != 0; i++ {
		secret = append(secret, i)
	}
	body := ssh.Marshal(struct {
		CipherName, KDFName, KDFOptions string
		NumKeys                         uint32
		PubKey                          []byte
		Secret                          []byte
	}{"none", "none", "", 1, pubBlob, secret})
	return &pem.Block{Type: "OPENSSH PRIVATE KEY", Bytes: append([]byte("openssh-key-v1\x00"), body...)}
}
