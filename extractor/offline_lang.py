"""What the offline rules know beyond English: the few signals that carry a memory in the languages the rules
cover (standing rules, names and roles, "without my confirmation", reply formats), plus the "no noise" guards
(questions, one-off requests) in all of them. Which language a sentence is in, and whether it is covered at all,
is extractor/offline_languages.py's.
The lists are written from general knowledge of each language, not from any session's transcript.
"""

from __future__ import annotations

import re

from memdir.stages.extractor import offline_scope as scope

# --- no noise: questions and one-off requests, in every covered language -------------------------------------
_QUESTION = re.compile(
    r"[?？]\s*$|^¿|^(?:est-ce que|pourquoi|comment|quand|quel(?:le)?s?|qu'est-ce|peux-tu|pouvez-vous|"
    r"por ?qué|cómo|cuándo|cuál|qué|dónde|puedes|podrías|"
    r"por que|como|quando|qual|onde|você pode|pode |"
    r"warum|wie|wann|welche[rs]?|wo|kannst du|können sie|"
    r"почему|зачем|как|когда|какой|какая|какие|где|можешь|можно ли|что такое)\b"
    r"|\bли\b|[吗吧呢][。.!！]?\s*$|(?:什么(?![都也])|为什么|怎么|怎样|哪|是否)|"
    # a Chinese A-not-A question asks without 吗 or a question mark ("是不是应该总是用pnpm": should we always...);
    # "不管是不是周末" (whether or not) is no question
    r"(?<!不管)(?<!无论)(?<!不论)(?:是不是|会不会|要不要|对不对|有没有|好不好|行不行|该不该|应不应该|需不需要|用不用|可不可能)"
    r"|(?:ですか|ますか|でしょうか|か)[。.]?\s*$",
    re.I,
)
# A request about the work at hand ("not yet", "this file", "for now"): true today, no rule for next time.
_ONE_OFF = re.compile(
    r"\b(?:yet|for now|right now|this time|for the moment|at the moment|today|in this (?:file|function|pr|commit)|"
    r"(?:for|in) this (?:pr|pull request|branch|ticket|task|change|bug|issue|fix)|this (?:bug|error|crash|one) first|"
    r"pour (?:ce|cette|cet) (?:fix|bug|commit|ticket|changement|correctif|probl[eè]me)|"
    r"pour l'instant|pour le moment|cette fois|encore|aujourd'hui|todavía|por ahora|esta vez|hoy|ainda|por enquanto|"
    r"desta vez|hoje|noch nicht|vorerst|diesmal|heute|пока|сейчас|в этот раз|сегодня"
    # "Do not test it again": the step just done, not to be repeated now ("never push again" stays: _STANDING)
    r"|(?:i|you|we)(?:'ve)? just (?!\w+ (?:the|a) way\b)|again|once more|otra vez|de nuevo|de novo|novamente|outra vez"
    r"|nochmal|noch einmal|снова|опять)\b"
    # "do not plan or implement", "don't implement anything": where the task of the moment stops, not a rule
    r"|\b(?:don'?t|do not) (?:plan|implement|code|start coding|write (?:any )?code)\b"
    r"|(?:暂时|先不要|这次|今天|今回|とりあえず|今日|もう一度)",
    re.I,
)


# Work on the thing at hand, said like a rule: picking one of the options just offered ("let's go with 2"), asking
# for a feature ("we should support those as well"), pointing at a concrete local path ("use this C:\... as the
# backup"). The code or the next step shows it; it is no rule for next time.
_PICKS_OPTION = re.compile(r"\b(?:go with|pick|choose|take|do)\s+(?:number\s+|#)?\d{1,2}\b(?![\w.%])"
                           r"|\b(?:go with|pick|choose|take)\s+(?:that|this|the|your)\s+(?:\w+\s+){0,2}?"
                           r"(?:option|approach|one|version|idea|suggestion|route|variant)\b"
                           # "I prefer the layout you showed": one of those just offered
                           # (the thing picked, named before "you": "as you suggested", "like you proposed" only say
                           # whose idea a decision was, and it stays one: a hostile review found them dropped)
                           r"|\b(?:the|that|this|those|these|one of)\s+(?:[\w-]+\s+){0,3}?(?:that\s+)?you (?:just )?"
                           r"(?:showed|suggested|proposed|offered|gave|made|described)\b"
                           # "let's use the second option", "try the other approach": one of those just offered
                           r"|\b(?:go with|pick|choose|take|use|do|try|prefer|like)\s+(?:the\s+)?(?:first|second|third|fourth|last|"
                           r"former|latter|other)\s+(?:one|option|approach|version|idea|variant|solution)\b"
                           r"|\b(?:option|opción|opção|variante|вариант)\s+(?:\d{1,2}|[a-d])\b|(?:选|用)(?:第)?[一二三四1-9](?:个|种)?(?:方案)?$",
                           re.I)
_WANTS_FEATURE = re.compile(r"\b(?:we should|we need to|we must|let'?s|can you|could you)\s+(?:also\s+)?(?:support|add|implement|"
                            r"build|handle|allow|include|introduce|expose|provide)\b", re.I)
_LOCAL_PATH = re.compile(r"(?<![\w/])(?:[A-Za-z]:\\|~/|/(?:home|Users|mnt|tmp)/)")
# "If we inherited this sdk in zygote, every process would ...": exploring a possibility, not deciding it. A rule
# with a condition says what to do ("if it fails, never push") and keeps its "never"/"don't".
_HYPOTHETICAL = re.compile(r"^(?:if|suppose|supposing|what if|imagine|si|supongamos|wenn|falls|если|предположим)\b"
                           r"|^(?:如果|假如|假设|要是|もし)", re.I)
_RULE_WORD = re.compile(r"\b(?:don'?t|do not|never|always|must|ne \w+ pas|jamais|nunca|nie|niemals|никогда|не)\b"
                        r"|(?:不要|别|必须|絶対)"
                        # "If you need more tools, ask me for permission": the condition says when the rule applies
                        r"|\bask (?:me|for (?:my )?(?:permission|approval))\b", re.I)


def is_task_at_hand(sentence: str) -> bool:
    """A request about the work in front of the user, worded like a rule (see the patterns above)."""
    return bool(_PICKS_OPTION.search(sentence) or _WANTS_FEATURE.search(sentence) or _LOCAL_PATH.search(sentence))


def picks_option(sentence: str) -> bool:
    return bool(_PICKS_OPTION.search(sentence))


def is_hypothetical(sentence: str) -> bool:
    return bool(_HYPOTHETICAL.match(sentence.strip())) and not _RULE_WORD.search(sentence)


# "I think we should run it on all pushes?": a proposal said with a rising voice, not a question.
_PROPOSAL = re.compile(r"^(?:i think|i believe|je pense qu|je crois qu|creo que|acho que|ich denke|ich finde|"
                       r"я думаю|я считаю)\w*,? (?:we|on|nous|deberíamos|debemos|devemos|deveríamos|wir|мы|нам)\b", re.I)


# "Can you also add a usage bar similar to https://...": a request (or a question) even without its question mark,
# unless it asks for something to hold from now on ("could you always run the tests first").
_ASKS = re.compile(r"^(?:can|could|would|will) you\b|^(?:do|does|did|is|are) (?:you|we|it|there|this|that)\b"
                   r"|^(?:why|how come)\b"
                   # "What icons do we use for X", "How should we name branches", "Which one is better": a question
                   # without its mark. Not "What I want is …" or "When you commit, …": no auxiliary right after.
                   r"|^(?:what|which|where|when|who|how)(?: [a-z]+)? (?:do|does|did|is|are|was|were|should|shall|can|"
                   r"could|would|will|have|has)(?: (?:we|you|i|they|it|he|she|the|this|that|there|our|my|a|an|better|"
                   r"best|wrong|right|going|used|needed)\b|[ ?]*$)", re.I)


def is_question(sentence: str) -> bool:
    sentence = sentence.strip()
    if _PROPOSAL.match(sentence) and not _QUESTION.search(sentence.rstrip("?？ ")):
        return False
    return bool(_QUESTION.search(sentence)) or bool(_ASKS.match(sentence) and not is_standing(sentence))


def said_for_now(sentence: str) -> bool:
    """Words that keep the sentence to the work at hand ("for now", "pour ce fix", "por ahora")."""
    return bool(_ONE_OFF.search(sentence))


def is_one_off(sentence: str) -> bool:
    return said_for_now(sentence) or scope.edit_at_hand(sentence)


# "今後ワークフローを追加したいと思っています", "in the future I'd like to add more workflows": the user's own plan for
# later, not a rule for the agent; "in the future, please don't push" asks something of the agent and stays a rule.
_LATER = re.compile(r"\b(?:in the future|later on|eventually|at some point|à l'avenir|plus tard|en el futuro|más adelante|"
                    r"no futuro|mais tarde|in zukunft|später|в будущем|позже)\b|(?:今後|これから|将来|いずれ|以后|今后|将来|之后)",
                    re.I)
_INTEND = re.compile(r"\b(?:i|we) (?:want|plan|intend|hope|would like|'d like|am going|'m going|are going|'re going|"
                     r"am planning|'m planning|are planning|'re planning) to\b|\b(?:je veux|je compte|nous voulons|"
                     r"quiero|pienso|planeo|queremos|quero|pretendo|ich will|ich möchte|wir wollen|я хочу|я планирую|мы хотим)\b"
                     r"|(?:たい(?:と思|です|。|$)|予定|つもり|我(?:想|打算|计划|准备)|我们(?:想|打算|计划|准备))", re.I)
_ASKS_AGENT = re.compile(r"\b(?:please|you|your|don'?t|do not|never|always|s'il te plaît|por favor|bitte|пожалуйста)\b"
                         r"|(?:ください|してほしい|して欲しい|你|您|请|不要|别)", re.I)


def is_plan(sentence: str) -> bool:
    """The user's own intention for later (a plan for the work), not a standing rule for the agent."""
    return bool(_LATER.search(sentence) and _INTEND.search(sentence)) and not _ASKS_AGENT.search(sentence)


_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]")


def word_count(sentence: str) -> int:
    """Words in a sentence, a CJK run (written without spaces) counted as one word per two characters: the
    "said in a breath" limits then mean the same length in every script."""
    cjk = len(_CJK_CHAR.findall(sentence))
    return len(_CJK_CHAR.sub(" ", sentence).split()) + (cjk + 1) // 2


# --- what holds beyond the moment ------------------------------------------------------------------------------
# "toujours pas" and "immer noch" / "noch immer" mean "still (not)": a report of the moment, not "always".
_STANDING = re.compile(
    r"\b(?:always|never|every time|each time|whenever|from now on|going forward|in (?:the )?future|by default|"
    r"throughout|everywhere|exclusively|exclusivement|exclusivamente|ausschließlich|исключительно|"
    r"at the (?:start|beginning|end) of (?:every|each)|every session|each session|"
    r"toujours(?!\s+pas\b)|jamais|à chaque|a chaque|en chaque|chaque fois|désormais|dorénavant|à l'avenir|par défaut|"
    r"siempre|nunca|cada vez|a partir de ahora|de ahora en adelante|en (?:el )?futuro|por defecto|"
    r"sempre|toda vez|cada vez|a partir de agora|daqui (?:em|para) (?:diante|frente)|no futuro|por padrão|"
    r"(?<!noch\s)immer(?!\s+noch\b)|niemals|nie|jedes mal|ab jetzt|künftig|zukünftig|standardmäßig|"
    r"всегда|никогда|каждый раз|впредь|в дальнейшем|с этого момента|по умолчанию|в начале (?:каждой|каждого))\b"
    r"|(?:总是|始终|永远|每次|以后|今后|往后|从今以后|默认|从现在开始|必ず|常に|いつも|毎回|今後|これから)"
    # "as much as possible", "when in doubt": a manner or a condition that holds for all the work, not one task
    r"|\b(?:as much as possible|whenever possible|wherever possible|where possible|when in doubt|if in doubt|"
    r"whenever (?:you'?re |you are )?(?:unsure|not sure)|autant que possible|dans la mesure du possible|en cas de doute|"
    r"siempre que (?:sea )?posible|en la medida de lo posible|en caso de duda|sempre que possível|na medida do possível|"
    r"em caso de dúvida|wann immer möglich|soweit möglich|im zweifel|по возможности|в случае сомнени\w*)\b"
    r"|(?:できるだけ|なるべく|可能な限り|迷ったら|尽量|尽可能|如有疑问|遇到不(?:明确|确定|清楚))"
    # a trigger that comes back: "before committing", "after every deploy", "avant chaque commit"
    r"|\b(?:before|after) (?:each|every|any) \w+|\bbefore (?:committing|pushing|merging|deploying|releasing|"
    r"opening a (?:pr|pull request))\b|\b(?:avant|après) chaque\b|\b(?:antes|después|depois) de cada\b"
    r"|\b(?:vor|nach) jedem\b|\b(?:перед|после) каждым\b|(?:每次)?(?:提交|推送|部署)(?:之前|前)",
    re.I,
)
_FIRST_THEN = re.compile(r"\b(?:first\b.+\bbefore|d'abord\b|primero\b.+\bantes|primeiro\b.+\bantes|zuerst\b|"
                         r"сначала\b.+\bпрежде|сначала\b.+\bперед)|先.+再|まず.+から", re.I)
_WITHOUT_CONSENT = re.compile(
    r"\bwithout (?:my|asking|checking with me)|\bsans (?:mon|ma|me demander)|\bsin (?:mi|preguntarme)|"
    r"\bsem (?:a )?minha|\bsem me perguntar|\bohne (?:meine|mich zu fragen)|\bбез (?:моего|моей|спроса)|"
    r"未经我|没有我的(?:确认|同意|允许)|私の(?:確認|許可|承認)なし",
    re.I,
)
_WANT_YOU = re.compile(
    r"\b(?:i want you to|i'd like you to|i need you to|je veux que tu|j'aimerais que tu|je voudrais que tu|"
    r"quiero que|me gustaría que|quero que (?:você|tu)|gostaria que (?:você|tu)|ich möchte,? dass du|ich will,? dass du|"
    r"я хочу,? чтобы ты|хочу,? чтобы ты|мне нужно,? чтобы ты)\b|我希望你|我想让你|してほしい|して欲しい",
    re.I,
)
_REPLY_FORMAT = re.compile(
    r"\b(?:response format|answer format|reply format|format de (?:la )?réponse|formato de (?:la )?respuesta|"
    r"formato da resposta|antwortformat|формат ответа)\b|(?:回复格式|回答格式|回答の形式|返信の形式)"
    r"|\b(?:reply|answer|respond|write to me) (?:only )?in (?:english|french|spanish|german|russian|chinese|japanese)\b"
    r"|\b(?:réponds|répondez|antworte|antworten sie|отвечай|отвечайте)\b"
    # Spanish "responde" and Portuguese "responda" are also what a subject does ("el endpoint responde con un 404"):
    # the imperative has none before it
    r"|(?:^|[,;:.!¡]\s*|\b(?:please|por favor|siempre|sempre|nunca|solo|sólo|só|apenas)\s+)(?:responde|respondé|responda)\b"
    r"|(?:用|以)(?:中文|英文|日语|简体中文|繁體中文)(?:回答|回复|回覆|答复)|(?:日本語|英語|中国語)で(?:答え|返信|回答|書い)",
    re.I,
)
# An instruction to write a standing rule into the agent's own instructions file.
_INSTRUCTIONS_FILE = re.compile(
    r"(?:^|[,;:]\s*)(?:please |also |and )?(?:put|add|write|note|modify|update|change|modifie|ajoute|mets|écris|"
    r"agrega|añade|escribe|modifica|adiciona|coloca|escreve|füge|schreib|ändere|добавь|запиши|внеси|измени)\b"
    r".{0,25}?\b(?:claude|agents)\.md\b\s*(?:that|to|pour|que|para|dass|,? ?чтобы|,? ?что)\b",
    re.I,
)


# "Ask me before installing anything", "列出修改计划,我同意后再执行", "pregúntame antes": the user keeps a say over a kind
# of action, a way of working that holds for every such action (_WITHOUT_CONSENT says it the other way round).
_ASK_FIRST = re.compile(
    r"\bask (?:me )?(?:for )?(?:my )?(?:permission|approval|consent|confirmation)\b|\bask (?:me )?(?:first|before)\b"
    r"|\b(?:check|confirm) with me (?:first|before)\b|\bwait (?:for|until) (?:my|i) (?:approval|ok|okay|go-ahead|"
    r"confirmation|approve|confirm|say so)\b|\b(?:get|have) my (?:approval|ok|go-ahead|sign-off|permission) (?:first|before)\b"
    r"|\b(?:until|after|once) i (?:approve|confirm|agree|say so)\b"
    r"|\bdemande(?:-moi)? (?:avant|d'abord|la permission|l'autorisation)\b|\baprès (?:mon accord|ma validation)\b"
    r"|\b(?:pregúntame|consúltame) (?:antes|primero)\b|\bpide(?:me)? permiso\b"
    r"|\b(?:pergunte|pergunta)(?:-me)? antes\b|\bpeça (?:minha )?permissão\b"
    r"|\bfrag(?:e)? mich (?:vorher|zuerst)\b|\bnach meiner (?:freigabe|zustimmung)\b"
    r"|\bспроси (?:меня )?(?:сначала|перед)\b|\bпосле (?:моего (?:согласия|одобрения|подтверждения))\b"
    r"|我(?:同意|确认|批准|允许)(?:之?后|以后)再|(?:经|经过|征得|得到)我(?:的)?(?:同意|确认|允许|批准)|等我(?:确认|同意|批准)"
    r"|先(?:问|询问|征求)我|(?:許可|確認|承認)を(?:取って|得て|もらって)|(?:私の)?(?:確認|承認)(?:を待って|してから)",
    re.I,
)
_CLAUSE_END = re.compile(r"[,;，；、]\s*|[.!?](?=[\u3040-\u30ff\u4e00-\u9fff])")  # ("问题.列出": CJK after a period)


def clauses(sentence: str) -> list[tuple[int, int]]:
    """Where each comma-separated clause of a sentence starts and ends."""
    spans, at = [], 0
    for match in _CLAUSE_END.finditer(sentence):
        spans.append((at, match.start()))
        at = match.end()
    return spans + [(at, len(sentence))]


def consent_clause(sentence: str) -> str | None:
    """The clause of a sentence that keeps the user's say over an action ("..., ask me to install them or ask for
    permission"), with the clause before it, which names the action ("列出修改计划,我同意后再执行"); or None."""
    spans = clauses(sentence)
    for at, (start, end) in enumerate(spans):
        if found := _ASK_FIRST.search(sentence[start:end]):  # ("without my confirmation ..." is a standing rule, whole)
            if scope.reported(sentence[: start + found.start()]):
                return None  # "He said: ask me first", "the README says to ask for permission": not the user's say
            if at == 0 and at + 1 < len(spans) and _GATE_FIRST.match(sentence[start:end]):
                # "Once I approve, merge it": the action it gates comes next; this task's own step when it is "it"
                end = spans[at + 1][1]
                if _GATES_THE_THING_AT_HAND.search(sentence[spans[at + 1][0]: end]):
                    return None
            said = sentence[spans[max(0, at - 1)][0]: end].strip(" .!。！")
            return said[:1].upper() + said[1:]
    return None


_GATE_FIRST = re.compile(r"\s*(?:only |wait )?(?:once|after|until|when|as soon as)\b", re.I)  # "Once I approve, ..."
_GATES_THE_THING_AT_HAND = re.compile(r"\b(?:it|this|that|these|those)\s*[.!。！]*\s*$", re.I)


def standing_rule(sentence: str) -> str | None:
    """Why this sentence states a rule for future work ("standing", "consent", "format", ...), or None."""
    if _INSTRUCTIONS_FILE.search(sentence):
        return "instructions-file"
    if (consent := _WITHOUT_CONSENT.search(sentence)) and not (
            _GATES_THE_THING_AT_HAND.search(sentence[: consent.start()]) and not standing_word(sentence)):
        return "consent"  # not "please write it without asking": the file at hand (fresh set 13), no rule
    if _REPLY_FORMAT.search(sentence):
        return "format"
    if _WANT_YOU.search(sentence) and (standing_word(sentence) or _FIRST_THEN.search(sentence)):
        return "wish"
    return None


# "Each question must have 5 options", "cada pregunta debe tener 5 opciones": a norm for every item of a kind, which
# holds for the next one too (a one-off task names its items: "this question should ..."). Only the firm modal: "all
# the questions need to be tightened", "each answer should read as sensible" are edits asked for now.
_EACH_NORM = re.compile(
    r"\b(?:each|every) \w+(?: \w+)? (?:must|has to)\b"
    r"|\bcada \w+(?: \w+)? (?:debe|deben|tiene que|deve|devem|tem que)\b|\bchaque \w+(?: \w+)? doit\b"
    r"|\bjede[rsn]? \w+ (?:muss|soll)\b|\bкажд\w+ \w+ (?:долж\w+)\b|每(?:个|条|道|次).{0,10}?(?:必须|都要|应该)",
    re.I,
)


def each_norm_clause(sentence: str) -> str | None:
    """The clause of a long sentence that states a norm for every item ("Cada pregunta debe tener 5 opciones de
    respuesta, las preguntas deben ser ... nivel 2" -> its first clause): the rest may be the task of the moment."""
    for clause in re.split(r"[,;，；]\s*", sentence):
        if _EACH_NORM.search(clause):
            return clause.strip(" .!。")
    return None


def standing_word(sentence: str) -> bool:
    """A word that makes a sentence hold beyond the moment; not "toujours" meaning "still", nor an "always" said of
    a failure (scope.without_reported_always)."""
    return bool(_STANDING.search(scope.without_reported_always(sentence)))


def is_standing(sentence: str) -> bool:
    return bool(standing_word(sentence) or _EACH_NORM.search(sentence))


# --- explicit requests and corrections beyond English ---------------------------------------------------------
_REMEMBER = re.compile(
    r"^(?:por favor,?\s+|s'il te plaît,?\s+|bitte\s+|пожалуйста,?\s+)?(?:recuerda(?: que)?|acuérdate de que|"
    r"no olvides que|lembre-se (?:de )?que|lembra que|lembre que|não esqueça que|souviens-toi que|rappelle-toi que|"
    r"n'oublie pas que|retiens que|merk dir,?(?: dass)?|denk daran,? dass|vergiss nicht,? dass|"
    r"запомни,?(?: что)?|помни,?(?: что)?|не забывай,? что)\s*(?P<what>.+)"
    r"|^(?:请)?(?:记住|别忘了|不要忘记)[，,:：]?\s*(?P<zh>.+)|^(?P<ja>.+?)(?:を|と|って)?(?:覚えておいて|忘れないで)",
    re.I,
)
_CORRECTION = re.compile(
    r"^(?:no,?\s+|non,?\s+|não,?\s+|nein,?\s+|нет,?\s+|por favor,?\s+|bitte\s+|пожалуйста,?\s+)*"
    r"(?:no (?:uses|utilices|hagas|agregues|añadas|pongas|cambies|toques|borres|instales)|nunca (?:uses|hagas)|"
    r"não (?:use|usa|faça|adicione|coloque|mude|mexa|apague|instale)|nunca (?:use|faça)|"
    r"ne (?:fais|fait|mets|ajoute|change|touche|supprime|installe) (?:pas|jamais)|n'(?:utilise|ajoute|installe) (?:pas|jamais)|"
    r"(?:benutze|verwende|nutze|mach|installiere) (?:kein|nie|nicht)|"
    r"не (?:используй|делай|добавляй|трогай|меняй|удаляй|ставь|устанавливай))\b"
    r"|^(?:请)?(?:不要|别|永远不要)|(?:^|[，,；;])\s*我不(?:想|要|希望)(?:再)?(?:用|使用)"
    r"|(?:しないで|使わないで)(?:ください)?[。.!！]?$",
    re.I,
)
# "Don't do that", "no hagas eso": about what was just done, not a rule for the next time.
_JUST_THAT = re.compile(r"\b(?:that|this|it|eso|esto|isso|isto|ça|cela|ceci|das|dies|это|этого"
                        # "don't add the logging there": the place pointed at ("here" is as often the project:
                        # "use pnpm instead of npm here")
                        r"|there|ahí|allí|ali|là|dort|там)\b[\s.!]*$"
                        r"|(?:那个|这个|それ|これ|この|その)", re.I)


def just_that(sentence: str) -> bool:
    """"Don't change that", "no hagas eso": about what was just done, in any covered language."""
    return bool(_JUST_THAT.search(sentence))


def remembered(sentence: str) -> str | None:
    """What a "remember ..." request in a covered language asks to keep, or None."""
    match = _REMEMBER.match(sentence)
    if not match:
        return None
    what = match.group("what") or match.group("zh") or match.group("ja") or ""
    return what.strip(" .,:;!。！") or None


# "コミットはしないで", "不要提交": a CJK "don't" with nothing but the action is about the step at hand. A rule says where,
# how or what ("不要在主分支上直接提交", "npmを使わないで"), or comes with a word that makes it firm ("絶対に", "千万") or
# says it holds beyond now (_STANDING).
_CJK_DONT = re.compile(r"^(?:请)?(?:不要|别)|(?:しないで|使わないで)(?:ください)?[。.!！]?$")
_CJK_FILLER = re.compile(r"[はをもがねよ、。，！!？?\s]")
# Words that make a bare "don't" hold beyond the step: never again, in no case, at any time, without exception. An
# emphasis alone ("絶対に実行しないで", "千万别运行": absolutely don't run it) is as often said of the one file at hand.
_FIRM = re.compile(r"(?:決して|二度と|永远|任何时候|一律|从不|始终)")
_BARE_ACTION_CHARS = 5
# An emphasis names no object: "絶対にじっこうしないで" (absolutely don't run [it]) leaves only the action.
_EMPHASIS = re.compile(r"(?:絶対(?:に)?|ぜったい(?:に)?|本当に|绝对|千万|一切)")


def _bare_cjk_dont(sentence: str) -> bool:
    """Only an action is left once the "don't" is taken away ("コミット", "提交"), and no tool is named."""
    rest = _CJK_FILLER.sub("", _EMPHASIS.sub("", _CJK_DONT.sub("", sentence.strip())))
    return len(rest) <= _BARE_ACTION_CHARS and not re.search(r"[A-Za-z]{2}", rest)


def correction(sentence: str) -> bool:
    """A correction in a covered language ("no uses npm", "не трогай миграции") that is more than "don't do that"."""
    if not _CORRECTION.search(sentence) or _JUST_THAT.search(sentence):
        return False
    if _CJK_DONT.search(sentence) and _bare_cjk_dont(sentence):
        return bool(_FIRM.search(sentence) or standing_word(sentence))
    return True


_FIRST_PERSON = re.compile(r"^(?:je|j'|yo|mi|eu|meu|minha|ich|mein|meine|я|мой|моя|меня)\b|^(?:我|私)", re.I)


def about_me(what: str) -> bool:
    return bool(_FIRST_PERSON.match(what))


# --- where things live ------------------------------------------------------------------------------------------
# Links into these systems point at the team's designs, docs and boards: a reference in any language.
_EXTERNAL_HOST = re.compile(r"https?://(?:www\.)?(?:figma\.com|[\w-]+\.notion\.site|notion\.so|docs\.google\.com|"
                            r"linear\.app|[\w-]+\.atlassian\.net|miro\.com|airtable\.com|trello\.com|"
                            r"[\w-]+\.slack\.com|app\.datadoghq\.com|[\w-]+\.sentry\.io)/\S+", re.I)
_STORED_AT = re.compile(r"\b(?:repo(?:sitory)?|vault|folder|docs?|drive)\b.{0,30}\b(?:is|are|will be|lives?|"
                        r"stored|kept|cloned)\b.{0,20}\b(?:in|at|under)\s+\S*[\\/]\S+", re.I)
_CONTINUES = re.compile(r"^(?:if so|if yes|then|si oui|sinon|si es así|si sí|se sim|falls ja|если да|если нет|"
                        r"и затем|potem)\b", re.I)


def external_link(sentence: str) -> str | None:
    match = _EXTERNAL_HOST.search(sentence)
    return match.group(0) if match else None


def points_to_location(sentence: str) -> bool:
    return bool(_STORED_AT.search(sentence))


def continues_previous(sentence: str) -> bool:
    """"If so, update local main..." completes the sentence before it, which it cannot stand without."""
    return bool(_CONTINUES.match(sentence))
