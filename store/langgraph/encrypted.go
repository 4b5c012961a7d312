package langgraph

import (
	"crypto/aes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ProtonMail/go-crypto/eax"
)

// EnvAESKey names the key of LangGraph's EncryptedSerializer
// (langgraph.checkpoint.serde.encrypted, from_pycryptodome_aes): its bytes,
// 16, 24 or 32 of them, as LangGraph reads it. The reader takes it from the
// environment whenever it meets an encrypted value, as LangGraph does.
const EnvAESKey = "LANGGRAPH_AES_KEY"

// cipherAES is the only cipher LangGraph ships: a value stored as type
// "<type>+aes" is nonce (16 bytes) ‖ tag (16) ‖ ciphertext, AES in EAX mode.
const cipherAES = "aes"

// errNoKey is a value LangGraph encrypted and no key was given for.
var errNoKey = errors.New("encrypted by LangGraph's EncryptedSerializer: set " + EnvAESKey + " to the key the saver used (its 16, 24 or 32 bytes) to read it")

// decrypted returns the type and bytes of a value as its serializer wrote
// them before EncryptedSerializer encrypted them; a type without "+" is
// returned as it is.
func decrypted(typ string, data []byte) (string, []byte, error) {
	inner, cipherName, ok := strings.Cut(typ, "+")
	if !ok {
		return typ, data, nil
	}
	if cipherName != cipherAES {
		return typ, nil, fmt.Errorf("stored as %q (%d bytes): encrypted with cipher %q, which rewind does not read (LangGraph's EncryptedSerializer writes %q)", typ, len(data), cipherName, cipherAES)
	}
	key := os.Getenv(EnvAESKey)
	if key == "" {
		return typ, nil, errNoKey
	}
	if n := len(key); n != 16 && n != 24 && n != 32 {
		return typ, nil, fmt.Errorf("%s is %d bytes long: AES takes a key of 16, 24 or 32 bytes (LangGraph refuses it too)", EnvAESKey, n)
	}
	const nonceLen, tagLen = 16, 16
	if len(data) < nonceLen+tagLen {
		return typ, nil, fmt.Errorf("an encrypted value of %d bytes is shorter than its nonce and tag (%d): the value is damaged", len(data), nonceLen+tagLen)
	}
	block, err := aes.NewCipher([]byte(key))
	if err != nil {
		return typ, nil, fmt.Errorf("%s: %w", EnvAESKey, err)
	}
	aead, err := eax.NewEAX(block)
	if err != nil {
		return typ, nil, fmt.Errorf("AES-EAX: %w", err)
	}
	nonce, tag, body := data[:nonceLen], data[nonceLen:nonceLen+tagLen], data[nonceLen+tagLen:]
	sealed := make([]byte, 0, len(body)+tagLen)
	sealed = append(append(sealed, body...), tag...)
	plain, err := aead.Open(nil, nonce, sealed, nil)
	if err != nil {
		return typ, nil, fmt.Errorf("%s does not open this value (another key encrypted it, or it is damaged)", EnvAESKey)
	}
	return inner, plain, nil
}
