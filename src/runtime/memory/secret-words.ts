// The words people write credentials down with, in English, German, French and Spanish: what names a credential,
// what introduces its value, and what, coming where a value would, shows the sentence only talks about one
// ("the password is stored in the vault"). Regular-expression source, matched case-insensitively with Unicode.

const alt = (parts: readonly string[]) => `(?:${parts.join("|")})`;

/** Places and things a code opens: "door code", "alarm panel disarm code", "Türcode", "code de la porte". */
const OPENS_EN = ["door", "front[- ]door", "gate", "garage", "alarm", "disarm", "entry", "access", "keypad", "safe", "lock", "lockbox", "building", "unlock", "security", "backup", "recovery", "verification", "login", "2fa", "two[- ]factor", "otp", "one[- ]time", "sms", "authenticator", "voicemail", "sim"];
const OPENS_DE = ["tür", "haustür", "tor", "garagen?", "alarm", "alarmanlagen?", "zugangs", "sicherheits", "tresor", "backup", "ersatz", "wiederherstellungs", "entsperr", "notfall", "bestätigungs", "anmelde"];
const OPENS_FR = ["pin", "secret", "confidentiel", "d['’]accès", "d['’]entrée", "de (?:la |l['’]|du )?(?:porte|alarme|portail|garage|sécurité|secours|récupération|sauvegarde|déverrouillage|coffre(?:-fort)?|immeuble|carte(?: bancaire)?|parking|cadenas)", "du (?:portail|garage|coffre|parking|cadenas)"];
const OPENS_ES = ["pin", "secreto", "de (?:acceso|la puerta|la alarma|el portal|seguridad|respaldo|recuperación|desbloqueo|la caja fuerte|entrada|la tarjeta|verificación|garaje)", "del (?:portal|garaje|candado|cajero)"];

/**
 * Nouns that name a credential outright: after one, any value is a secret unless it is a word from NOT_A_VALUE
 * ("my password is Kiwi!2291", "Kennwort: Lindenbaum77", "contraseña: naranja").
 */
export const CREDENTIAL = alt([
  // English
  "pass(?:word|phrase|code)s?",
  "passwd",
  "pwd",
  "pins?(?: (?:code|number))?",
  "api[ _-]?keys?",
  "(?:secret|access|private|recovery|license|encryption|wi-?fi|wlan|wpa2?|network|ssh|gpg|pgp) keys?",
  `${alt(OPENS_EN)}(?: [\\p{L}-]+){0,2} (?:codes?|combos?|combinations?)`,
  "(?:recovery|seed|mnemonic|backup) (?:phrase|words)",
  "credentials",
  "creds",
  "cvv2?",
  "cvc",
  "otp",
  // German (compounds: "E-Mail-Passwort", "Handy-PIN", "Haustür-Code", "WLAN-Schlüssel")
  "[\\p{L}-]*(?:passwort|passwörter|kennwort|kennwörter)",
  "[\\p{L}]+-pin",
  "(?:sim|bank|karten|handy|geheim)pin",
  "geheimzahl",
  "(?:zugangs|anmelde|login)daten",
  `[\\p{L}-]*?${alt(OPENS_DE)}-?codes?`,
  "[\\p{L}-]*?(?:wlan|netzwerk|wiederherstellungs|api|sicherheits)-?schlüssel",
  // French
  "mots? de passe",
  "mdp",
  `codes? ${alt(OPENS_FR)}`,
  "digicodes?",
  "identifiants",
  "clés? (?:wi-?fi|wpa2?|du réseau(?: wi-?fi)?|api|de récupération|secrète|d['’]accès)",
  "phrase de récupération",
  "cryptogramme",
  // Spanish
  "contraseñas?",
  "claves? de acceso",
  "clave (?:del |de )?(?:wi-?fi|correo|banco|tarjeta|cajero|red)",
  `códigos? ${alt(OPENS_ES)}`,
  "credenciales",
  "frase semilla",
]);

/**
 * Nouns that may name a credential or something else ("the key insight", "la clave es practicar", "the secret to
 * sourdough"): only a value that looks like one (see looksLikeCredential) counts after them.
 */
export const MAYBE_CREDENTIAL = alt(["keys?", "schlüssel", "clés?", "claves?", "secrets?", "tokens?", "combos?", "combinations?", "kombination", "combinaison", "combinación"]);

/** Words that introduce a value: "is", "lautet", "c'est", "es". */
export const INTRODUCES = alt([
  "is", "was", "are", "were", "equals",
  "ist", "lautet", "lauten", "sind", "war", "heißt",
  "est", "c['’]est", "sont", "était",
  "es", "son", "era",
]);

/** Signs that introduce a value: "PIN: 1234", "pwd=…". */
export const INTRODUCING_SIGN = alt([":", "=", "->", "→"]);

/** Filler that may stand between a credential's name and its value ("for the shared drive", "der Bankkarte"). */
export const CONJUNCTIONS = alt(["and", "or", "but", "und", "oder", "aber", "et", "ou", "mais", "y", "o", "pero"]);

/**
 * Words that, where a value would stand, show the sentence talks about the credential instead of giving it:
 * articles, prepositions, adverbs and what people say about passwords ("is stored", "ist im Tresor", "est
 * enregistré", "está guardada").
 */
export const NOT_A_VALUE = new Set([
  // English
  "a", "an", "the", "my", "his", "her", "their", "our", "your", "its", "this", "that", "same", "different", "in", "on", "at", "by", "with", "for", "from", "to", "of", "into", "inside", "not", "never", "always", "also", "still", "too", "very", "now", "being", "been", "kept", "stored", "saved", "managed", "written", "printed", "shared", "set", "changed", "reset", "rotated", "expired", "expiring", "forgotten", "lost", "required", "needed", "missing", "unknown", "secret", "private", "confidential", "strong", "weak", "long", "short", "secure", "insecure", "simple", "easy", "hard", "complicated", "new", "old", "unique", "random", "encrypted", "hashed", "sensitive", "somewhere", "elsewhere", "there", "here", "available", "valid", "invalid", "wrong", "correct", "case-sensitive", "due", "about", "only", "just", "usually", "generated",
  // German
  "der", "die", "das", "dem", "den", "des", "ein", "eine", "einer", "einem", "sein", "ihr", "mein", "dein", "unser", "im", "in", "am", "auf", "bei", "mit", "für", "von", "zu", "zum", "zur", "nicht", "nie", "immer", "auch", "noch", "sehr", "jetzt", "gespeichert", "hinterlegt", "notiert", "geändert", "abgelaufen", "vergessen", "verloren", "geheim", "sicher", "unsicher", "stark", "schwach", "lang", "kurz", "neu", "alt", "gleich", "dasselbe", "derselbe", "dieselbe", "anders", "verschlüsselt", "irgendwo", "dort", "hier", "gültig", "falsch", "richtig", "nur",
  // French
  "le", "la", "les", "l", "un", "une", "des", "du", "de", "son", "sa", "ses", "mon", "ma", "mes", "leur", "dans", "sur", "chez", "avec", "pour", "par", "pas", "jamais", "toujours", "aussi", "encore", "très", "trop", "maintenant", "enregistré", "enregistrée", "sauvegardé", "sauvegardée", "gardé", "gardée", "stocké", "stockée", "changé", "changée", "modifié", "modifiée", "expiré", "expirée", "oublié", "oubliée", "perdu", "perdue", "secret", "secrète", "sûr", "sûre", "fort", "forte", "faible", "long", "longue", "court", "courte", "nouveau", "nouvelle", "ancien", "ancienne", "identique", "différent", "différente", "chiffré", "chiffrée", "quelque", "ici", "valide", "faux", "fausse", "seulement",
  // Spanish
  "el", "los", "las", "una", "unos", "unas", "su", "sus", "mi", "mis", "tu", "en", "con", "para", "por", "del", "no", "nunca", "siempre", "también", "todavía", "muy", "demasiado", "ahora", "está", "guardada", "guardado", "almacenada", "almacenado", "cambiada", "cambiado", "caducada", "caducado", "olvidada", "olvidado", "perdida", "perdido", "secreta", "secreto", "segura", "seguro", "fuerte", "débil", "larga", "largo", "corta", "corto", "nueva", "nuevo", "vieja", "viejo", "igual", "misma", "mismo", "distinta", "distinto", "cifrada", "cifrado", "algún", "aquí", "allí", "válida", "incorrecta", "correcta", "solo", "sólo", "practicar",
]);

/** Units after a number that describe a credential instead of giving it: "the password is 12 characters long". */
export const UNITS = alt(["characters?", "chars?", "digits?", "letters?", "words?", "days?", "weeks?", "months?", "zeichen", "stellen", "ziffern", "buchstaben", "tage?n?", "wochen?", "monate?n?", "caractères?", "chiffres?", "lettres?", "mots?", "jours?", "semaines?", "mois", "caracteres?", "dígitos?", "letras?", "palabras?", "días?", "semanas?", "meses?"]);

/** Words that name an account, before a "name / password" pair: "login admin / Sommer2024", "Zugang: root / x". */
export const ACCOUNT = alt(["log-?ins?", "sign-?ins?", "accounts?", "user(?:name)?s?", "benutzer(?:name)?", "konto", "anmeldung", "zugang", "identifiant", "utilisateur", "compte", "usuario", "cuenta", "acceso"]);

/** Words that start a description, not an account name, after ACCOUNT: "login with Google / Apple". */
export const NOT_AN_ACCOUNT = alt(["with", "via", "through", "using", "mit", "über", "per", "avec", "par", "con", "mediante", "por"]);
