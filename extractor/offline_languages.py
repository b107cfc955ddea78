"""Which language a sentence is in, and whether the offline rules cover it (extractor/offline_lang.py holds the
rules' markers in each covered language).

The rules cover English, French, Spanish, Portuguese, German, Russian, Chinese and Japanese. A sentence in any
other language (another script, or Latin-script words none of these languages use) is not read at all: the offline
engine saves nothing from it rather than guess, and says so (`language_note`).
"""

from __future__ import annotations

import re

from memdir.stages.extractor import prose

COVERED = ("en", "fr", "es", "pt", "de", "ru", "zh", "ja")
LANGUAGE_NAMES = {"en": "English", "fr": "French", "es": "Spanish", "pt": "Portuguese", "de": "German",
                  "ru": "Russian", "zh": "Chinese", "ja": "Japanese", "ko": "Korean", "ar": "Arabic",
                  "he": "Hebrew", "hi": "Hindi", "th": "Thai", "el": "Greek", "uk": "Ukrainian",
                  "other": "a language the offline rules do not cover"}

_SCRIPTS = (("ja", r"[\u3040-\u30ff]"), ("ko", r"[\uac00-\ud7af\u1100-\u11ff]"), ("zh", r"[\u4e00-\u9fff]"),
            ("uk", r"[єїіґЄЇІҐ]"), ("ru", r"[\u0400-\u04ff]"), ("ar", r"[\u0600-\u06ff]"), ("he", r"[\u0590-\u05ff]"),
            ("hi", r"[\u0900-\u097f]"), ("th", r"[\u0e00-\u0e7f]"), ("el", r"[\u0370-\u03ff]"))
_SCRIPT_RES = tuple((lang, re.compile(rx)) for lang, rx in _SCRIPTS)
_LETTER = re.compile(r"[^\W\d_]")
# Short, frequent words that tell the Latin-script languages apart (a word shared by two counts for both).
_STOPWORDS = {
    "en": "the and is are to of you i it this that with for not my we be do have can please use",
    "fr": "le la les et est un une des je tu pas pour que qui avec dans sur ce ne mon ma mes il vous",
    "es": "el la los las y es un una que de en no por para con mi yo lo se del al como pero",
    "pt": "o a os as e é um uma que de em não para com meu minha eu do da se você mas",
    "de": "der die das und ist ein eine ich nicht zu mit für auf du mein es den dem sie wir bitte",
}
_STOP_SETS = {lang: set(words.split()) for lang, words in _STOPWORDS.items()}
# Portuguese "use" (the imperative of "usar", spelled as English "use"): "Sempre use pnpm" scored a tie with English
# and was read by the English rules, where a rule starts with an imperative; an English "use" still wins a tie.
# English's short function words too: without them "No attribution" read as Spanish and "Im building a saas company"
# as Portuguese (a tie goes to English, the language most sessions are in).
for _lang, _extra in (("en", "always never don't every each a an on at no so if or as by from your our all but just"),
                      ("fr", "en toujours jamais chaque fois s'il"),
                      ("es", "siempre nunca cada este esta usa"), ("pt", "na no sempre nunca cada isso esse essa use"),
                      ("de", "immer niemals nicht jedes bitte")):  # not "nie": Polish's "not" far more often
    _STOP_SETS[_lang] |= set(_extra.split())
# Letters only some of the languages use: a tie-breaker for short sentences.
_LETTERS = {"fr": "éèêàùçœë", "es": "ñ¿¡áíóú", "pt": "ãõçáâêôú", "de": "ßäöü"}
# Words no covered language uses but common in ones the rules do not cover: Italian, Dutch, Polish, Czech,
# Indonesian, Turkish, Swedish, Catalan. Polish typed without its letters ("Tak dokument przygotuj na ... nie wspominaj o")
# scored as Portuguese on "na" and "o" (a held-out set, 9 false saves in 2 Polish sessions).
_UNCOVERED_LATIN = set("""il della che sono di per gli het een niet ik je jij dat van wij jest nie się że
    jak ale bu ve bir için değil tak czy mam jeszcze już tego tym być są może przez dla bo żeby też tylko mi
    zrób sprawdz sprawdź teraz trzeba ten ta te jako jestem proszę dobra dobrze zawsze nigdy
    questo questa anche sempre perché ma più fare ho hai non sei solo molto mai invece ogni dopo usare utilizza
    utilizzare scrivi rispondi prima delle degli nella nelle alla alle sulla dei quello
    lloc amb aquest aquesta aquests també perquè utilitza utilitzar fes feu sisplau els abans
    ook maar wel geen deze voor zijn naar kan hebben wat mijn
    jsem není aby také jako nebo když tak že prosím
    yang dan di ini itu dengan untuk tidak ada saya akan dari ke bisa juga sudah
    och är att inte jag det som för med på""".split()) - set().union(*_STOP_SETS.values())
# Languages that share most of their short words with covered ones, each with its own common words, shared ones
# included: "Il test fallisce sempre" scored French on "il" and Portuguese on "sempre" (Italian, 2 words of its own
# against 1 of either), "El servidor sempre retorna 500" Spanish on "el" (Catalan). More of their words than of the best
# covered language's, two at least, is an uncovered language (a tie stays covered: "A API sempre retorna 500").
# Only words frequent in the language and rare in its neighbours ("de", "les", "in" would turn French and English over).
_NEAR_COVERED = {
    "it": """il lo la gli un una di che non è per con sempre mai anche questo questa quello sono ho hai ha della del dei delle
             degli nella nel alla al sulla sul ogni invece usa usare utilizza utilizzare scrivi rispondi dopo più""",
    "ca": "el els un una i amb per és sempre mai aquest aquesta també perquè utilitza fes feu sisplau abans lloc això però",
    "nl": """de het een en is niet van voor met op te dat die er maar ook wel geen deze zijn naar kan wat mijn altijd
             nooit gebruik gebruiken elke keer moet moeten bij als dan nog ik geeft faalt""",
    "ro": """și si nu este în cu pe să sa mereu întotdeauna intotdeauna niciodată niciodata folosește foloseste care
             pentru acest această aceasta asta fără fara din sunt""",
}
_NEAR_SETS = {lang: set(words.split()) for lang, words in _NEAR_COVERED.items()}
_UNCOVERED_LATIN |= set().union(*_NEAR_SETS.values()) - set().union(*_STOP_SETS.values())
# Letters of those languages that no covered language writes (Polish, Czech, Turkish, Romanian, Hungarian,
# Nordic, Vietnamese): one in a word is foreign evidence as strong as a function word.
_UNCOVERED_LETTERS = set("ąęłńśźżěščřůťďňğışășțőűøåæđơư")


def language_of(sentence: str) -> str:
    """The sentence's language: a covered code, or the uncovered language's code ("other" when unsure)."""
    letters = len(_LETTER.findall(sentence))
    for lang, rx in _SCRIPT_RES:
        if letters and len(rx.findall(sentence)) >= max(1, letters // 5):
            return lang
    words = re.findall(r"[a-zà-ÿß']+", sentence.lower())
    if not words:
        return "en"  # symbols, paths, a URL: nothing language-specific to misread
    lowered = sentence.lower()
    scores = {lang: sum(1 for w in words if w in stops)
              + 0.5 * sum(lowered.count(c) for c in _LETTERS.get(lang, "")) for lang, stops in _STOP_SETS.items()}
    best = max(scores, key=lambda lang: (scores[lang], lang == "en"))
    foreign = (sum(1 for w in words if w in _UNCOVERED_LATIN)
               + sum(1 for w in lowered.split() if not _UNCOVERED_LETTERS.isdisjoint(w)))  # ł, ś...: past ÿ
    if scores[best] == 0:
        return "other" if foreign and len(words) >= 3 else "en"
    near = max(sum(1 for w in words if w in near_words) for near_words in _NEAR_SETS.values())
    if near >= 2 and near > scores[best]:
        return "other"
    # As much evidence of an uncovered language as of the best covered one (two words or more): unsure, so
    # nothing is read from it rather than misread ("save nothing rather than noise").
    # A tie with French, Spanish or Portuguese is unsure too: "Utilizza sempre pnpm" scored Portuguese on "sempre" alone,
    # a word Italian shares with them (a tie with English or German stays: "retry per request", "push nie direkt").
    if foreign > scores[best] or foreign >= max(2, scores[best]) or (best in ("fr", "es", "pt") and foreign >= scores[best]):
        return "other"
    return best


def language_note(messages: list, dense_read: bool = False) -> str | None:
    """What to tell the user when some of their words are in a language the rules do not read (`dense_read`: the
    meaning signal, extractor/offline_dense.py, scored them all the same)."""
    unread: dict[str, int] = {}
    read = 0
    for message in messages:
        text = message.user_text()
        for sentence in prose.statements(prose.own_prose(text)) if text else []:
            code = language_of(sentence)
            if code in COVERED:
                read += 1
            else:
                unread[code] = unread.get(code, 0) + 1
    if not unread:
        return None
    names = ", ".join(LANGUAGE_NAMES.get(code, code) for code in sorted(unread, key=lambda c: -unread[c]))
    count = sum(unread.values())
    if dense_read:
        return f"{count} of the user's sentences are in {names}: the offline rules do not read those; the dense model scored them"
    if not read:
        return f"the user wrote in {names}: the offline rules do not read it, so nothing was saved from it"
    return f"{count} of the user's sentences are in {names}: the offline rules do not read those"
