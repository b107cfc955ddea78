"""Who the user is, in the languages extractor/offline_lang.py covers: their name and role, the tools they work with
or no longer use, the words they write with, what they are switching from, their identity for commits; and the
sentence that goes on describing a reply format. Split from offline_lang.py (which reads a sentence's language, its
noise and whether it holds beyond the moment) to keep one job per module. Written from general knowledge of each
language, not from any session's transcript."""

from __future__ import annotations

import re

from memdir.stages.extractor import offline_scope as scope

_NAME = re.compile(
    r"\b(?:my name is|call me|je m'appelle|appelle-moi|me llamo|mi nombre es|llámame|meu nome é|me chamo|"
    r"pode me chamar|ich heiße|mein name ist|меня зовут|обращайся ко мне|зови меня)\b|我叫|我的名字是|私の名前は|と呼んで",
    re.I,
)
_ROLE_NOUN = (r"(?:développ\w+|ingénieu?r\w*|chef de projet|fondat\w+|étudiant\w*|designer|"
              r"desarrollador\w*|ingenier[oa]s?|programador\w*|fundador\w*|estudiante|gerente|diseñador\w*|"
              r"desenvolvedor\w*|engenheir[oa]s?|estudante|"
              r"entwickler\w*|ingenieur\w*|gründer\w*|student\w*|"
              r"разработчик\w*|программист\w*|инженер\w*|менеджер\w*|дизайнер\w*|аналитик\w*|студент\w*|основател\w+|"
              r"руководител\w+)")
_ROLE_FOREIGN = re.compile(
    r"\b(?:je suis|soy|sou|ich bin|я|я являюсь|я работаю)\b(?:\s+\w+){0,3}?\s+" + _ROLE_NOUN + r"\b"
    r"|我是.{0,12}(?:工程师|开发|程序员|经理|学生|设计师|创始人)|私は.{0,12}(?:エンジニア|開発者|デザイナー|マネージャー|学生)",
    re.I,
)
_TOOLS = re.compile(
    r"\b(?:i (?:don'?t|do not|never) use|je n'utilise (?:pas|jamais)|no uso|nunca uso|não uso|nunca uso|"
    r"ich (?:benutze|nutze|verwende) (?:kein|nie)|не использую|не пользуюсь)\b"
    r"|\b(?:использую|используется|используются|использоваться|пользуюсь)\b.{0,40}\bдля\b|\bне использую\b"
    r"|我不用|我不使用|は使いません|は使わない(?!で)",
    re.I,
)
# "I never use that language, I always say impediment": the words the user writes with, a rule for the text
# (feedback), not a tool they use; "that language" points back at the sentence before it.
_VOCABULARY = re.compile(r"\bi (?:almost |nearly )?(?:always|never|usually|rarely|rather) (?:say|write|call (?:it|them)|spell|"
                         r"use the (?:word|term)s?)\b"
                         r"|\b(?:je dis toujours|yo siempre digo|eu sempre digo|ich sage immer|я всегда говорю)\b", re.I)
_POINTS_BACK = re.compile(r"\b(?:that|this|such) (?:language|word|term|phrase|wording|expression)s?\b", re.I)
_SWITCHING = re.compile(r"\b(?:i'?m|i am) (?:switching|changing|moving|migrating) from\b.+", re.I)
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b")
_IDENTITY_HINT = re.compile(r"\b(?:commit|author|git|my (?:e-?mail|name)|email is|e-mail is|correo|courriel)\b", re.I)


# "I use direnv to set up the devbox shell": a habit of the user's (simple present). "I'm using Twilio for SMS": what
# the work is built on now (progressive), a fact about the project. A pronoun or "the/this ..." names no tool.
_TOOL = r"(?!(?:it|this|that|these|those|them|the|a|an|my|your|our|some|any)\b)`?[\w.+#@/-]+`?(?: [\w.+#-]+){0,2}?"
_USES_HABIT = re.compile(r"^(?:i (?:always |usually |normally |mostly )?use|j'utilise|uso|ich (?:benutze|nutze|verwende)|"
                         r"я использую|я пользуюсь) " + _TOOL + r" (?:to|for|pour|para|für|um|для)\b", re.I)
_USES_NOW = re.compile(r"^(?:i'?m|i am|we'?re|we are) using " + _TOOL + r" (?:for|to|as)\b", re.I)


# "let's delete the shortcuts that I don't use now": a relative clause says which things, not what the user works
# with ("les raccourcis que je n'utilise pas", "ярлыки, которые я не использую", "我不用的快捷键").
_RELATIVE_BEFORE = re.compile(r"(?:\b(?:that|which|what|whatever|ones|those)|\bque|\bqu'|\bкотор\w*|\bчто),?(?:\s+(?:я|eu|yo))?\s*$", re.I)


# ...and then names it: "what I don't use is yarn", "lo que no uso es Docker", "то, что я не использую, — это Docker",
# "我不用的工具是 Docker": the tool the user does without, not which things ("the shortcuts that I don't use").
_NAMED_AFTER = re.compile(r"^(?:(?:now|ever|anymore|at all)\s*)?,?\s*(?:(?:is|are|es|son|é|são|c'est|ist|sind|это)"
                          r"(?=\W|$)|:|—\s*это(?=\W|$))|^的[^，。,.!?！？]{0,6}是", re.I)


def _describes(sentence: str, said: re.Match) -> bool:
    rest = sentence[said.end():].lstrip()
    if _NAMED_AFTER.match(rest):
        return False
    return bool(_RELATIVE_BEFORE.search(sentence[: said.start()])) or rest.startswith("的")


def uses_tool(sentence: str) -> str | None:
    """"user" when the sentence names a tool the user habitually works with, "project" when it names what the work
    uses now, else None."""
    sentence = sentence.strip().lstrip("-*• ")
    if _USES_HABIT.match(sentence):
        return "user"
    if _USES_NOW.match(sentence):
        return "project"
    return None


def about_the_user(sentence: str) -> str | None:
    """The kind of user fact this sentence states ("name", "role", "tools", "switching", "identity"), or None."""
    if _NAME.search(sentence):
        return "name"
    if _ROLE_FOREIGN.search(sentence):
        return "role"
    if (tools := _TOOLS.search(sentence)) and not _POINTS_BACK.search(sentence) and not _describes(sentence, tools):
        return "tools"
    if _EMAIL.search(sentence) and _IDENTITY_HINT.search(sentence):
        return "identity"
    return None


# "I use Windows", "I work on a Mac", "I'm a data scientist": who the user is and what they work on, in the simple
# present (a habit or a state), not what they must weigh now ("I have to pay taxes", "I'm using the staging DB").
_SELF = re.compile(r"^(?:that\s+)?(?:i(?: always| usually| mostly| only)? (?:use|work (?:on|with|in|at|for))|i(?:'m| am) an?)\b",
                   re.I)


def states_self(what: str) -> bool:
    """Whether what the user asks to remember is a fact about themself (extractor/offline.py keeps it even right
    after a question, where "remember ..." usually names a factor the question must weigh)."""
    return bool(_SELF.match(what)) or about_the_user(what) in ("name", "role", "identity")


# "Reply format: start with a sun emoji, keep it short. The result of your work must include a table.": the second
# sentence goes on describing the output the format asks for.
_OUTPUT = re.compile(r"^(?:the |your )?(?:result|output|report|answer|response)s?\b|^(?:le |la |el |o |a )?(?:résultat|"
                     r"resultado|rapport|informe|relatório|réponse|respuesta|resposta)s?\b|^(?:das )?(?:ergebnis|bericht)\b"
                     r"|^(?:результат|отч[её]т|ответ)|^(?:结果|输出|报告|結果|出力|レポート)", re.I)


def describes_output(sentence: str) -> bool:
    return bool(_OUTPUT.match(sentence.strip()))


def vocabulary(sentence: str) -> bool:
    return bool(_VOCABULARY.search(sentence))


def points_back(sentence: str) -> bool:
    return bool(_POINTS_BACK.search(sentence))


def switching_clause(sentence: str) -> str | None:
    """"... as I am changing from using gemini cli to claude code" -> that clause, or None."""
    match = _SWITCHING.search(sentence)
    return match.group(0).rstrip(" .!") if match else None


# "I don't like mocks, since they hide real failures": a dislike of a kind of thing, with what makes it one (its reason,
# or when it may still be used); "I don't like this colour" is about the thing at hand, and a bare dislike says no more.
# English only, as the rest of the preference rules it joins (extractor/offline_english.py).
_DISLIKES = re.compile(r"^(?:i|we) (?:really )?(?:don'?t|do not) like (?!(?:it|this|that|these|those|the|how|what|when|"
                       r"where|your|you|him|her)\b)\w", re.I)
_REASON_OR_EXCEPTION = re.compile(r"\b(?:because|since|so that|as otherwise|the reason is|unless)\b", re.I)


def reasoned_dislike(sentence: str) -> bool:
    return bool(_DISLIKES.search(sentence) and _REASON_OR_EXCEPTION.search(sentence))


# "This is my work pc", "my default shell is fish", "I don't have access to the prod cluster", "我默认的终端是zsh",
# "我开发环境会是无桌面的服务器", "我没法访问gemini模型": the machine the user works on and what it can reach, which shapes
# every command and suggestion (said in passing, often inside a question: only that clause is kept).
_ENV_NOUN = (r"(?:pc|computer|laptop|machine|mac|macbook|desktop|workstation|shell|terminal|editor|ide|os|operating system|"
             r"browser|dev(?:elopment)? (?:environment|machine|box|setup)|environment)")
_SETUP = re.compile(
    r"\b(?:this is|it'?s) my (?:\w+ )?(?:pc|computer|laptop|machine|mac|macbook|desktop|workstation)\b"
    # (what it is, not how it is doing: "my terminal is frozen", "my laptop is a bit slow" are the moment)
    r"|\bmy (?:default|main|usual|only|primary) " + _ENV_NOUN + r" (?:is|runs)\b"
    r"|\bmy " + _ENV_NOUN + r" (?:is|runs) (?:on )?(?!a (?:bit|little|lot|mess|pain)\b)(?:an? |windows|macos|linux|ubuntu|wsl)"
    r"|\b(?:i|we) (?:don'?t|do not) have access to\b|\bi(?:'m| am) (?:on|using|running) (?:windows|macos|a mac|linux|ubuntu|wsl)\b"
    r"|\b(?:c'est|ceci est) mon (?:pc|ordinateur|portable)\b|\bmon (?:terminal|shell|éditeur|ordinateur|environnement(?: de dév\w*)?)"
    r"(?: par défaut)? est\b|\bje n'ai pas accès à\b"
    r"|\b(?:este|esta) es mi (?:pc|ordenador|computadora|portátil)\b|\bmi (?:terminal|shell|editor|ordenador|computadora|entorno"
    r"(?: de desarrollo)?)(?: por defecto)? es\b|\bno tengo acceso a\b"
    r"|\b(?:este|esse) é o meu (?:pc|computador|notebook)\b|\bmeu (?:terminal|shell|editor|computador|ambiente(?: de "
    r"desenvolvimento)?)(?: padrão)? é\b|\bnão tenho acesso a\b"
    r"|\bdas ist mein (?:pc|rechner|laptop|arbeitsrechner)\b|\bmein (?:terminal|editor|rechner)(?: standardmäßig)? ist\b"
    r"|\bich habe keinen zugriff auf\b|\bэто мой (?:пк|компьютер|ноутбук)\b|\bу меня нет доступа к\b"
    r"|我(?:的)?(?:默认|常用)?的?(?:终端|terminal|shell|编辑器|ide|系统|电脑|开发环境|环境|机器)(?:是|用的是|会是|为)"
    r"|我(?:的)?(?:开发)?环境会|我(?:没法|无法|不能|没有权限)访问|这是我的(?:\w{0,4})?(?:电脑|机器)"
    r"|私の(?:PC|パソコン|環境|マシン|ターミナル)は|(?:に|へ)(?:は)?アクセスできません",
    re.I,
)
_CLAUSE_STOP = re.compile(r"[,;，；。?？!！]|\s(?:and|but|so|because|et|mais|y|pero|e|mas|und|aber|и|но)\s", re.I)


def setup_clause(sentence: str, asked: bool = False) -> str | None:
    """The words that state the user's machine or access ("This is my work pc" of "This is my work pc and i need
    you to ..."), or None. `asked`: the sentence is a question, whose statement must be a clause of its own ("How
    do I open it, my dev machine is a headless server"), not the thing asked ("Do you think I am on linux?")."""
    match = _SETUP.search(sentence)
    starts = [m.end() for m in _CLAUSE_STOP.finditer(sentence, 0, match.start())] if match else []
    before = sentence[starts[-1] if starts else 0: match.start()] if match else ""
    if not match or scope.not_said_as_so(sentence[: match.start()]):
        return None  # "If I don't have access to the bucket, ...": a case supposed, or reported, not the user's
    stop = _CLAUSE_STOP.search(sentence, match.end())
    last = not sentence[stop.start() if stop else len(sentence):].strip(" ?？")  # nothing after its clause but a "?"
    if asked and (re.search(r"\w", before) or (last and sentence.rstrip().endswith(("?", "？")))):
        return None  # the thing asked: "Do you think I am on linux?", "Mi terminal por defecto es zsh?"
    said = sentence[match.start(): stop.start() if stop else None].strip(" .")
    if re.search(r"(?:\b(?:is|runs|to|on|using|running|est|es|é|ist|à|a|auf|к)|是|会|为|访问|使用|は)$", said, re.I):
        return None  # the clause stops before it says what (a comma right after "my default shell is")
    return said[:1].upper() + said[1:]
