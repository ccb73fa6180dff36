package platform

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/pem"
	"fmt"

	"golang.org/x/crypto/ssh"
)

// Keys of the suite's auth Secret.
const (
	// AuthTokenKey holds the key that authenticates the runner's result frames.
	AuthTokenKey = "token"
	// AuthSSHPrivateKey and AuthSSHPublicKey are the key pair the master of a VM run uses to reach its
	// nodes. MPIJobs get their own keys from the MPI Operator.
	AuthSSHPrivateKey = "ssh-privatekey"
	AuthSSHPublicKey  = "ssh-publickey"
)

// Auth is the content of a suite's auth Secret.
type Auth struct {
	Token         []byte
	SSHPrivateKey []byte
	SSHPublicKey  []byte
}

// NewAuth makes a fresh frame token and an ed25519 SSH key pair.
func NewAuth() (Auth, error) {
	token := make([]byte, 32)
	if _, err := rand.Read(token); err != nil {
		return Auth{}, fmt.Errorf("generating the frame token: %w", err)
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return Auth{}, fmt.Errorf("generating the SSH key pair: %w", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "vmbench")
	if err != nil {
		return Auth{}, fmt.Errorf("encoding the SSH private key: %w", err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		return Auth{}, fmt.Errorf("encoding the SSH public key: %w", err)
	}
	return Auth{
		Token:         []byte(hex.EncodeToString(token)),
		SSHPrivateKey: pem.EncodeToMemory(block),
		SSHPublicKey:  ssh.MarshalAuthorizedKey(sshPub),
	}, nil
}

// AuthFromData reads an auth Secret's data, failing when a key is missing.
func AuthFromData(data map[string][]byte) (Auth, error) {
	a := Auth{Token: data[AuthTokenKey], SSHPrivateKey: data[AuthSSHPrivateKey], SSHPublicKey: data[AuthSSHPublicKey]}
	for key, v := range map[string][]byte{AuthTokenKey: a.Token, AuthSSHPrivateKey: a.SSHPrivateKey, AuthSSHPublicKey: a.SSHPublicKey} {
		if len(v) == 0 {
			return Auth{}, fmt.Errorf("the auth Secret has no %q key", key)
		}
	}
	return a, nil
}

// Data is the Secret data of an Auth.
func (a Auth) Data() map[string][]byte {
	return map[string][]byte{AuthTokenKey: a.Token, AuthSSHPrivateKey: a.SSHPrivateKey, AuthSSHPublicKey: a.SSHPublicKey}
}
