"""Facts the user states in passing that the offline rules keep (issue 20): how experienced they are, the
circumstances they work in, who the work is for, what the codebase bans, the conventions they name, the ticket they
work on, a resource they have at hand; and what makes a sentence a pointer into an external system. Each is a kind
of statement, not a sentence: written from general knowledge of how people say these things, in the languages
extractor/offline_lang.py covers where the wording is unambiguous (English only elsewhere, where a pattern would
guess).

A question or a one-off request is filtered before these are asked (extractor/offline.py)."""

from __future__ import annotations

import re

_MODEL = (r"(?:\binspired by\b|\bmodell?ed (?:on|after)\b|\bas (?:a |the |my |our )?(?:reference|model|inspiration)\b|"
          r"\bbased on the (?:design|look|style) of\b|\binspirée? (?:de|par)\b|\binspirad[oa] (?:en|em)\b|"
          r"\bcomo referencia\b|\bcomo referência\b|\bangelehnt an\b|\bals (?:vorlage|vorbild|referenz)\b|\bпо образцу\b|"
          r"参考に|参照して|参考了|借鉴|仿照)")
_IDIOM_PLACES = (r"(?:circles?|loops?|fumes|empty|deadlines?|time|schedule|budget|trouble|problems?|issues?|errors?|"
                 r"autopilot|faith|hope|luck|caffeine|coffee|steam|borrowed time)\b")
_NOT_IDIOM = r"(?!(?:(?:a|an|the|our|my) )?" + _IDIOM_PLACES + r")"
_KINDS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    # "I'm a complete beginner", "我是小白": how much the user knows shapes every explanation.
    ("user", "expertise", re.compile(
        r"\bi'?m (?:a |an )?(?:complete |total |absolute )?(?:beginner|newbie|novice|non-technical|"
        r"not (?:a |an )?(?:developer|programmer|coder|engineer))\b|\bje suis (?:un |une )?(?:débutant|novice)\w*|"
        r"\bsoy (?:un |una )?(?:principiante|novat[oa])\b|\bsou (?:um |uma )?(?:iniciante|novat[oa])\b|"
        r"\bich bin (?:ein |eine )?(?:anfänger|neuling)\w*|\bя (?:новичок|начинающ\w+)|"
        r"我是(?:个|一个)?(?:小白|新手|初学者|外行)|(?:私は)?(?:初心者|素人)です", re.I)),
    # "I'm a family man with a young kid, I don't have a lot of free time": what the user's time allows.
    ("user", "circumstances", re.compile(
        r"\bi'?m a (?:family man|father|mother|dad|mom|mum|parent|single parent)\b|"
        r"\bi (?:also )?have (?:a |an |two |three |\d )?(?:young |small |little )?(?:kids?|children|baby|toddler)\b|"
        r"\bi (?:don'?t|do not) have (?:a )?lot of (?:free |spare )?time\b|"
        r"\bi (?:only )?have (?:limited|little|very little) (?:free |spare )?time\b", re.I)),
    # "This app is for the UK": who the product serves decides units, wording, defaults.
    ("project", "audience", re.compile(
        r"\b(?:this|the|my|our) (?:app|site|website|tool|product|project|game|platform|service) is (?:for|aimed at|"
        r"targeted at|built for|meant for)\b|\b(?:cette|l')\s?(?:app|application|site) est (?:pour|destinée? à)\b|"
        r"\b(?:esta|la) (?:app|aplicación|web) es para\b|(?:这个|该)(?:应用|app|网站|项目)是(?:给|面向|为)", re.I)),
    # "All the new projects that we start should be in ~/claude projects": where every new thing of a kind goes.
    ("feedback", "placement", re.compile(
        r"\b(?:all|every|each|any)(?: of)?(?: the| our| my)? (?:new |future )(?:projects?|repos|repositories|"
        r"scripts?|notes?|docs?|documents?|reports?|plans?|specs?|skills?|agents?|components?)\b[^.;!?]{0,30}?"
        r"\b(?:should|must|needs? to|has to|have to|will|always|goe?s?)\b[^.;!?]{0,20}?\b(?:in|into|under|inside)\b|"
        r"\b(?:todos|todas) (?:os|as|los|las) (?:nuevos |novos |nuevas |novas )?(?:proyectos|projetos|scripts|notas)"
        r"(?: nuevos| novos| nuevas| novas)?\b[^.;!?]{0,30}?\b(?:deben|devem|tienen que|têm que|vão|van)\b[^.;!?]{0,20}?"
        r"\b(?:en|em|dentro)\b|\btous les nouveaux (?:projets|scripts|fichiers)\b[^.;!?]{0,30}?\b(?:doivent|vont)\b|"
        r"\balle neuen (?:projekte|skripte|dateien)\b[^.;!?]{0,30}?\b(?:sollen|müssen|kommen)\b", re.I)),
    # "Using any type is banned from my codebase": a rule for all code, said as a fact.
    ("feedback", "ban", re.compile(
        r"\b(?:is|are) (?:banned|forbidden|prohibited|not allowed|ban)\b.{0,24}\b(?:codebase|code|repo|repository|"
        r"project)\b|\b(?:is|are) (?:banned|forbidden|prohibited|ban) (?:from (?:my|our|the|this)|in (?:my|our|this)) \w+", re.I)),
    # "Keep messages, titles and descriptions brief", "... while keeping it simple and dependency free": a quality
    # the user wants kept in everything of a kind, named in the plural ("this function", "the header": the task at hand).
    ("feedback", "keep", re.compile(
        r"(?:^|\bwhile |, ?|\band |\bbut )keep(?:ing)? (?!this\b|that\b|these\b|those\b)(?:it |things |everything |(?:the |all |"
        r"your |our )?(?:\w+ )?\w+s(?:(?:, | and | & )(?:\w+ )?\w+s){0,3} )(?:as |very |really )?(?:brief|short|concise|terse|minimal|"
        r"simple|small|lean|lightweight|plain|dependency[- ]free|framework[- ]free|compilation[- ]free|build[- ]free|"
        r"cross[- ]platform|to the point)\b", re.I)),
    # "I don't think we can change the tc-table component": a part of the system the work has to live with.
    ("project", "constraint", re.compile(
        r"(?:\b(?:we|you|i) (?:can'?t|cannot|can not|are not allowed to|aren'?t allowed to)|\bi (?:don'?t|do not) think "
        r"(?:we|you) can) (?:change|modify|touch|edit|alter|"
        r"replace|upgrade|remove) (?:the |our |this )?[\w.<>-]+(?: [\w.<>-]+)? (?:component|library|lib|package|api|"
        r"schema|table|service|module|dependency|database|db|interface|contract|sdk)s?\b", re.I)),
    # "We are running in tmux", "we're developing on Windows": where the work runs.
    ("project", "environment", re.compile(
        # (not an idiom: "we're running in circles", "running on a deadline", "I'm running on fumes")
        r"^(?:we|i)(?:'re|'m| are| am) (?:all )?(?:running|developing) (?:in|inside|under|within)"
        r"(?: (?:a|an|the|our|my))? " + _NOT_IDIOM + r"[\w.+-]+(?: [\w.+-]+)?[.!]?$"
        r"|^(?:we|i)(?:'re|'m| are| am) (?:running|developing) on(?: (?:a|an|the|our|my))? " + _NOT_IDIOM +
        r"[\w.+-]+(?: [\w.+-]+)?[.!]?$",
        re.I)),
    # "The goal is to let any app write a coredump without changing its code", "需求就是…": what the work is for.
    ("project", "goal", re.compile(
        # (in English the project's own, said so: "the goal is to fix this test" is the task of the moment)
        r"\bthe (?:main |overall |end |ultimate |long-term )(?:goal|requirement|objective|aim)s? (?:of (?:this|the) "
        r"(?:project|app|tool|product|work) )?(?:is|are)\b|\bthe (?:goal|requirement|objective|aim)s? of (?:this|the) "
        r"(?:project|app|tool|product) (?:is|are)\b"
        r"|\bl'objectif (?:principal )?est\b|\bel objetivo (?:principal )?es\b|\bo objetivo (?:principal )?é\b"
        r"|\bdas ziel ist\b|\bцель (?:проекта )?(?:—|-|в том|состоит)|(?:需求|目标|目的)(?:就)?是|目標は|目的は", re.I)),
    # "Its design takes https://example.dev/ as its model", "https://…のサイトを参考にしています": a site the work is modelled
    # on, kept as a reference (a request "similar to <link>" asks for a feature now, and is not one of these).
    ("reference", "model", re.compile(
        r"https?://\S+.{0,60}?" + _MODEL + r"|" + _MODEL + r".{0,60}?https?://", re.I)),
    # "Commit messages should be in English", "代码注释用英文写", "Use British spelling": the language the work's text is
    # written in, which holds for every commit, comment and doc.
    ("feedback", "language", re.compile(
        # said as a norm ("should be", "write", "always"): "the docs in English are outdated" is about the docs
        r"^(?=.*\b(?:write|writing|written|keep|should|must|needs? to|has to|have to|always|only|use|deben?|doit|"
        r"doivent|deve|devem|muss|müssen|должн\w*)\b).*?"
        r"\b(?P<at>commit messages|commits|messages|comments|docs|variable names|identifiers|titles|"
        r"descriptions|pr descriptions|changelogs)\b.{0,25}?\bin (?:english|french|spanish|german|portuguese|russian|"
        r"chinese|japanese)\b|\b(?:british|american|us|uk) (?:english|spelling)\b"
        r"|\b(?:commits?|comentarios|mensajes|commentaires|messages de commit|kommentare|commit-nachrichten|комментарии|"
        r"коммиты)\b.{0,25}?\b(?:en (?:inglés|español|anglais|français)|em (?:inglês|português)|auf (?:englisch|deutsch)|"
        r"на (?:английском|русском))\b"
        r"|(?:注释|提交信息|提交说明|文档|commit)(?:都|一律|统一)?(?:用|使用)(?:英文|中文|英语)", re.I)),
    # "No emojis in commit messages": a ban on something in every artefact of a kind.
    ("feedback", "ban", re.compile(
        # (only what gets written: "no errors in the logs", "no changes in the code" are observations)
        r"^no (?:more )?[\w-]+(?: [\w-]+)? (?:in|on) (?:the |any |our |my )?(?:commit(?: message)?s?|messages|comments|"
        r"prs?|pull requests|pr titles|pr descriptions|readmes?|responses|answers|titles|branch names)[.!]?$",
        re.I)),
    # "I hate it when you add files I didn't ask for": a behaviour of the agent's the user does not want again.
    ("feedback", "dislike", re.compile(
        r"\bi (?:really )?(?:hate|don'?t like|do not like|dislike|can'?t stand) (?:it )?when you\b", re.I)),
    # "No, my site is hosted on Cloudflare Pages actually": where the product lives outside the repository.
    ("reference", "hosting", re.compile(
        r"^(?:(?:no|actually|btw|fyi|yes),? )?(?:our |the |my )?(?:prod(?:uction)? )?(?:ci|ci/cd|pipeline|builds?|backend|"
        r"frontend|api|site|website|app|database|db|docs|blog|portfolio|server) (?:is|are) (?:hosted|deployed) "
        r"(?:on|in|at|to|with|by)\b", re.I)),
    # "The production database is read-only", "we're on Python 3.9": facts about the environments the work runs in.
    ("project", "environment", re.compile(
        # (what it is, not how it is doing: "the test server is down again" is the moment)
        r"^(?:the |our )?(?:prod|production|staging|live|dev|development|test) (?:database|db|server|bucket|environment|"
        r"env|cluster|api|site)s? (?:is (?:read-only|shared|managed|hosted|deployed|on|at|in|behind)|are (?:shared|managed|"
        r"hosted|on|in|at)|runs? on|lives? (?:on|in|at)|uses?)\b"
        r"|^(?:our |the )?(?:ci|ci/cd|cd|pipeline|builds?|backend|frontend|api|site|app|database|db) (?:runs?|lives?) "
        r"(?:on|in|at)\b"
        r"|^(?:we'?re|we are|i'?m|i am) (?:still )?(?:on|stuck on|pinned to) [\w.+-]+ v?\d+\.\d+(?:\.\d+)?\b", re.I)),
    # "我们用的是 PostgreSQL", "Reactを使っています": what the work is built on, said in Chinese or Japanese.
    ("project", "stack", re.compile(
        r"^(?:我们|我们的项目|项目|本项目)(?:用的是|使用的是|在用|使用|用)\s*[A-Za-z][\w.+-]*"
        r"|^[A-Za-z][\w.+-]*(?: [A-Za-z][\w.+-]*)?\s*を使って(?:います|いる)", re.I)),
    # "The primary colour should be orange", "la couleur principale soit du orange": the product's look, for every page.
    ("project", "design", re.compile(
        r"\b(?:main|primary|brand|accent|theme) colou?rs? (?:is|are|should be|will be|must be)\b|\bcouleur principale\b|"
        r"\bcolor (?:principal|primario)\b|\bcor principal\b|\bprimärfarbe\b|\bhauptfarbe\b|\bосновн\w+ цвет\w*|"
        r"(?:主色|主题色|主色调|メインカラー|テーマカラー)", re.I)),
    # "Run the workflow every day at 9", "毎日9時に実行": when the product does its work.
    ("project", "schedule", re.compile(
        r"\b(?:every day|daily|each day|every (?:morning|evening|night|hour|monday|tuesday|wednesday|thursday|friday|"
        r"saturday|sunday|week)) at \d{1,2}(?::\d\d)?\s*(?:am|pm|h)?\b|\b(?:tous les jours|chaque jour) à \d{1,2}\s*h|"
        r"\btodos los días a las \d{1,2}\b|\btodos os dias às \d{1,2}\b|\btäglich um \d{1,2}\b|"
        r"\bкаждый день в \d{1,2}\b|(?:毎日|毎朝|毎晩|每天|每日)(?:早上|晚上|上午|下午)?\d{1,2}(?:時|点|:\d\d)", re.I)),
    # "We also have internal libs, like ista-common": what the team has of its own, which the work may need to reach.
    ("project", "in-house", re.compile(
        r"^(?:we|our (?:team|company|org|organisation|organization)) (?:also )?(?:have|maintain|run|publish|use) "
        r"(?:our own|(?:an? |some |a few |several |many )?(?:internal|in-?house|private|proprietary|self-hosted))\b", re.I)),
    # "... ng-select with the class tc-select, I believe that's the convention elsewhere."
    ("feedback", "convention", re.compile(
        r"\b(?:that'?s|it'?s|this is|which is) (?:the|our) (?:convention|house style|standard practice)\b|"
        r"\bc'est la convention\b|\bes la convención\b|\bé a convenção\b", re.I)),
    # "I'm working on ticket #3045 — it's for users with large lists ...": what the current work is about.
    ("project", "work", re.compile(
        r"^(?:i'?m|we'?re|i am|we are) (?:currently )?working on (?:ticket|issue|story|feature|epic) #?[\w-]*\d", re.I)),
    # "For system design I also have https://... available to me": a resource the user can point the work at.
    ("reference", "resource", re.compile(
        r"\bi (?:also )?have (?:access to )?https?://\S+ (?:available|at hand)\b|\bi have access to https?://", re.I)),
)


_AROUND_WORDS = 14  # a fact said in a long run-on sentence is kept with this many words either side of it
# Kinds whose words start where the pattern does: what comes before "while keeping it simple" or "需求就是" is the
# request of the moment ("please review the three files ...", "深度了解该开源项目的实现").
_FROM_MATCH = ("keep", "goal")
# "No, my site is hosted on Cloudflare Pages actually": the reply's own "no" and "actually" are not part of the fact
_ASIDE = re.compile(r"^(?:no|yes|actually|btw|fyi),?\s+|,?\s+actually(?=[.!]?$)", re.I)
# "The README says the main goal is ...", "the assistant said the goal of this project is ...", "the log says the keys
# are listed in ~/.ssh": words the user relays from a page, a file, a log or the agent are not what they state. (A goal
# starts at its match, so the frame that said whose words they were was dropped and only the relayed words kept.)
# "As I said" and "like we said" are the user's own.
_RELAYED = re.compile(
    # (third person or past: "read @file and ..." and "show me" are requests, "the docs say" is plural)
    r"(?<!\bi )(?<!\bwe )\b(?:says?|said|writes|wrote|reads|states|claims|mentions|suggests|prints|printed|"
    r"shows|showed|recommends|tells (?:me|us)|told (?:me|us)|according to|dit|disent|selon|dice|dicen|según|diz|dizem|"
    r"segundo|sagt|sagen|laut|говорит|пишет|написано|согласно)\b|(?:说|写着|提到|根据|によると|と書いて)", re.I)


def relayed(before: str) -> bool:
    """The words before a match say they are someone else's, or open a quotation the match is inside."""
    opened = before.count('"') % 2 == 1 or before.count("“") > before.count("”") or before.count("«") > before.count("»")
    return opened or bool(_RELAYED.search(before))


# "Ne modifie pas main.", "Não mexa na main": the main branch is not where the agent works, in any language, even
# when said inside the task of the moment (English says it as a correction: "Don't push to main").
_OFF_MAIN = re.compile(r"\bne (?:modifie|touche|pousse|push|commit|travaille|merge)\w* (?:pas|jamais)(?: (?:sur|dans|à|a))?"
    r"(?: la branche)? (?:main|master)\b"
    r"|\bno (?:modifiques|toques|hagas (?:push|commit|merge)|trabajes|empujes)(?: (?:en|a|sobre))?(?: la rama)? "
    r"(?:main|master)\b"
    r"|\bn[ãa]o (?:modifique|mexa|altere|fa[çc]a (?:push|commit|merge)|trabalhe)(?: (?:na|em|no|a|direto na))?"
    r"(?: branch)? (?:main|master)\b"
    r"|\b(?:nicht|nie|niemals) (?:direkt )?(?:auf|in) (?:den |die )?(?:main|master)(?:[- ]branch)? (?:pushen|committen|"
    r"arbeiten|mergen)\b|(?:不要|别|不能)(?:直接)?(?:修改|改动|动|推送到|推到|提交到|合并到)\s?(?:main|master)", re.I)


# "..., mas sem voce como co-author", "never add Co-Authored-By": how the user's commits are signed holds for every
# commit after this one, however much the sentence around it is the commit of the moment.
# A word's ending is bounded (\w{0,12}: "coauthorship", "соавторство"): with \w* the second form below tried every
# "coauthor" of a 16 KB "coauthorcoauthor..." run against the rest of it, 3.6 s for one rejection reason (unbounded).
_COAUTHOR = (r"(?:co-?authou?r\w{0,12}|co-?authored(?:[- ]by)?|co-?auteur\w{0,12}|co-?autor\w{0,12}|mitautor\w{0,12}|"
             r"соавтор\w{0,12}|"
             r"generated with \[?claude|共同作者|合著|共著)")
_NOT_SIGNED = re.compile(
    r"(?:\b(?:without|no|don'?t|do not|never|remove|drop|stop adding|not|sem|não|nao|nunca|sin|quit\w*|sans|pas|"
    r"jamais|ohne|kein\w*|nicht|niemals|без|не|никогда)\b|不要|别|不用|去掉|不加)[^.;!?\n]{0,40}?" + _COAUTHOR
    + r"|" + _COAUTHOR + r"[^.;!?\n]{0,12}?(?:なし|しない|入れない|付けない|不要|去掉)", re.I)
_ATTRIBUTION_WORDS = 30  # a longer sentence is cut to the words around the mention


def git_habit(sentence: str) -> tuple[str, str] | None:
    """(kind, the user's words) when the sentence says how the agent uses git for good: commits without a co-author
    line ("attribution"), or never on the main branch ("branch"); None otherwise."""
    if (off_main := _OFF_MAIN.search(sentence)) and not relayed(sentence[: off_main.start()]):
        return "branch", sentence.rstrip(" .!…")
    said = _unsigned_commits(sentence)
    return ("attribution", said) if said else None


def _unsigned_commits(sentence: str) -> str | None:
    """The user's words that say commits carry no co-author line for the agent, or None."""
    match = _NOT_SIGNED.search(sentence)
    if not match or relayed(sentence[: match.start()]):
        return None
    words = sentence.split()
    if len(words) > _ATTRIBUTION_WORDS:
        before = sentence[: match.start()].split()[-_AROUND_WORDS:]
        words = before + sentence[match.start():].split()[: _AROUND_WORDS + 1]
    said = " ".join(words).rstrip(" .!,;…")
    return said[:1].upper() + said[1:]


def stated_fact(sentence: str) -> tuple[str, str, str] | None:
    """(memory type, kind, the words that state it) for the fact this sentence states in passing, or None. A long
    sentence is cut to the words around the fact: the rest of it is usually the request of the moment."""
    for type_, kind, pattern in _KINDS:
        match = pattern.search(sentence)
        if match and relayed(sentence[: match.start("at") if match.re.groupindex and match.group("at") else match.start()]):
            return None  # (a pattern read from the start of the sentence names where its fact begins: `at`)
        if match:
            start = match.start() + len(match.group(0)) - len(match.group(0).lstrip(", "))
            if kind in _FROM_MATCH:
                # a kept quality ends at the next clause ("..., see TODOs and propose a plan"); a goal runs on
                stop = re.search(r"[,;，；]", sentence[match.end():]) if kind == "keep" else None
                found = sentence[start: match.end() + stop.start() if stop else None].strip()
                return type_, kind, found[:1].upper() + found[1:].rstrip(" .!,;?")
            before = sentence[: match.start()].split()[-_AROUND_WORDS:]
            after = sentence[match.start():].split()[: _AROUND_WORDS + 1]
            found = _ASIDE.sub("", " ".join(before + after)).rstrip(" .!,;")
            return type_, kind, found[:1].upper() + found[1:]
    return None


# --- pointers into external systems ---------------------------------------------------------------------------------
# "Https://...": a sentence's first word is capitalised. A link never ends in a colon, comma, full stop, semicolon,
# "!" or "?": "Open <url>: the latency dashboard" and "Open <url>, the latency dashboard" put a label after it, and
# "see <url>." ends the sentence. One the link goes on from (a port, "wiki/Help:Contents", "v1.2/") stays in.
URL = re.compile(r"https?://[^\s)>\]\"']*[^\s)>\]\"':,.;!?]", re.I)
TICKET = re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d{1,6}\b")
_CHANNEL = re.compile(r"(?:^|\s)(#[a-z0-9][a-z0-9_-]{2,})\b")
REFERENCE_HINT = re.compile(
    r"\b(?:dashboard|board|tracker|tracked|ticket|issue|runbook|docs?|wiki|channel|slack|jira|linear|grafana|repo|"
    r"repository|github|gitlab|bitbucket|"
    r"notion|confluence|sentry|datadog|pagerduty|spreadsheet|sheet)\b",
    re.I,
)
# A link to one issue, pull request or commit names the work item of the moment ("do issue .../issues/22"); a pointer
# worth keeping leads to a board, a doc, a dashboard or a repository.
_WORK_ITEM_URL = re.compile(r"/(?:issues|pull|pulls|merge_requests|commit|commits)/[\w]+/?$", re.I)


# "To find the precise URLs, please check ~/git/rdm/sbt/base-settings", "the registry URLs are defined in
# docs/registries.md": where to look for something, a pointer to keep.
_LOOK_THERE = re.compile(
    # (not the task of the moment: "to find the bug, check src/app.py", "for the error, see /tmp/build.log")
    r"(?:^to find\b(?! out\b| the (?:bug|error|crash|problem|issue|cause|failure|failing)\b)"
    r"|^for (?!(?:the |more )?(?:bug|error|crash|problem|issue|failure)s?\b)(?:the |more )?\w+(?: \w+)?,)"
    r"[^.]{0,80}?\b(?:check|see|look (?:at|in|into)|refer to|consult) "
    r"|\b(?:are|is) (?:defined|documented|listed|configured|described|specified) (?:in|at|under) ", re.I)
_PLACE = re.compile(r"(?:~|\.{0,2}/|[A-Za-z]:\\|https?://|[\w.-]+/)\S*[\w/]")


def where_to_look(sentence: str) -> bool:
    """A sentence that says where something is found, naming a path or a link."""
    match = _LOOK_THERE.search(sentence)
    return bool(match and not relayed(sentence[: match.start()]) and _PLACE.match(sentence[match.end():].lstrip("`'\"")))


# A file the page loads (an icon, an image, a font, a script) or a CDN's copy of one is material for the task, not a
# place to go back to: "https://cdn.jsdelivr.net/gh/.../svg/svelte.svg".
_ASSET_URL = re.compile(r"\.(?:svg|png|jpe?g|gif|webp|ico|avif|bmp|css|js|mjs|woff2?|ttf|otf|mp[34]|webm|wav)(?:[?#]\S*)?$"
                        r"|^https?://(?:[\w-]+\.)*(?:cdn\.[\w.-]+|jsdelivr\.net|unpkg\.com|cdnjs\.cloudflare\.com|"
                        r"[\w-]+\.cloudfront\.net|raw\.githubusercontent\.com|images\.unsplash\.com)/", re.I)
_HOST = re.compile(r"https?://([^/\s]+)\S*", re.I)
# A documentation page ("https://developers.x.io/reference/...", "https://help.x.md/...", "https://x.readthedocs.io") is
# where to look again next time, even when handed over to be read now ("read <docs url> and fix the syntax"); an API's
# own host ("https://api.x.com/v1/...") is what the code calls, and a sentence of links alone says nothing of them.
_DOC_URL = re.compile(r"https?://(?:(?:docs?|developers?|help|support|learn|wiki)\.[\w.-]+|[\w.-]+\.readthedocs\.io|"
                      r"[\w.-]+/(?:docs?|documentation|reference|api-reference|wiki|manual|guides?)(?=[/#?]|$))", re.I)


def documentation_link(sentence: str) -> bool:
    if not re.search(r"[^\W\d_]{2,}", URL.sub(" ", sentence)):
        return False
    return any(_DOC_URL.match(url) and not _ASSET_URL.search(url) for url in URL.findall(sentence))


# "Summarise <docs url>", "<url> の要約をしてください", "translate this page <url>": a page handed over for its contents
# now, even a documentation page, which is otherwise where to look again (set 19: two AWS pages to summarise); and "add
# this mcp <url>", "install this plugin <url>": a tool to set up now, which its config will show. A request: the verb
# opens the sentence (after "now", "please", "can you" ...) and takes the link or "this", "the" ... as its object, or is
# said in a form that asks. Not the words of a link ("https://cloud.google.com/translate/docs"), nor a verb that tells
# what is done ("we translate strings in <url>", "要約した資料は <url>", "翻译成英文的文档在 <url>"), nor a noun ("TLDR of
# the design lives at <url>", "Resume parsing is documented at <url>"), nor a tool named in a label ("Add this: the
# dashboard is <url>"): real pointers the first version dropped (hostile27).
_LINK = "\ue000"  # what the sentence is read with in place of each link
_ASKING = (r"^[\s\-*•>\"'“„«(]*(?:\ue000\s*[-:,–—]*\s*)?(?:(?:now|and|then|also|ok(?:ay)?|so|hey|first|let'?s|let us|"
           r"please|pls|plz|kindly|can you|could you|would you|will you|i need you to|i want you to|help me|por favor|puedes|"
           r"podrías|pode|podes|poderia|peux-tu|pourrais-tu|pouvez-vous|merci de|bitte|пожалуйста|можешь)[,!.]?\s+)*")
_OBJECT = (r"\s*(?:(?:briefly|quickly|kurz|кратко|brièvement|rapidement|rapidamente)\s+)?(?:\ue000|(?:this|that|these|"
           r"those|it|the|an?|me|ça|ce|cette|cet|ces|les?|la|l'|esto|esta|este|eso|esa|ese|el|los|las|isso|isto|essa|esse|"
           r"os?|as?|das|die|den|dieses?|diesen|es|mir|это|эту|этот|эти|мне)\b|[\s.!?]*$)")
_FOR_CONTENTS_NOW = re.compile(
    _ASKING + r"(?:(?:summari[sz]e|translate|résume[zr]?|tradui[st]|traduire|resum(?:e|a|ir)|traduz(?:a|ir)?|traduc(?:e|ir)|"
    r"übersetze?|перескажи|резюмируй|переведи|кратко изложи|sum up)\b" + _OBJECT + r"|fass\w*\b(?=.*\bzusammen\b)"
    r"|(?:give me|get me|i need|i want|i'd like|fais(?:-moi)?|hazme|haz|faz|faça|сделай|mach mir)\s+"
    r"(?:(?:a|an|me|un|una|um|uma|eine?n?)\s+)?(?:(?:quick|short|brief|petit|court|rápido|breve|kurze?n?)\s+)?"
    r"(?:summary|tl;?dr|résumé|resumen|resumo|zusammenfassung|краткое содержание|translation|traduction|traducción|"
    r"tradução|übersetzung)\b|tl;?dr:?(?:\s+(?:this|that|it|pls|please|for me)\b|[\s.!?]*$|\s*\ue000)"
    r"|(?:add|install|set up|setup|configure|enable|connect)\s+(?:this|that|these|the following)\s+(?:[\w.-]+\s+)?"
    r"(?:mcps?|plugins?|extensions?|packages?|librar(?:y|ies)|dependenc(?:y|ies)|skills?|tools?|integrations?|servers?|"
    r"add-?ons?|apps?|themes?)\s*[:\-–—]?\s*\ue000)"
    r"|(?:要約|翻訳)を?(?:して(?:ください|下さい|くれ|ほしい|欲しい|もらえ|いただけ|頂け|[。！!？?\s]|$)|しろ|しなさい|お願い)"
    r"|まとめて(?:ください|下さい|くれ|ほしい|欲しい)|(?:帮我|幫我|请|請|给我|給我)(?:总结|總結|概括|翻译|翻譯)"
    r"|(?:总结|總結|概括|翻译|翻譯)(?:一下|下(?![来來])|(?:这|這)(?:篇|个|個|页|頁|份|些))|把.{0,80}?(?:翻译|翻譯)成"
    r"|(?:요약|번역)해\s*(?:줘|주세요|줄래|봐)", re.I)


def handed_over_for_contents(sentence: str) -> bool:
    return bool(_FOR_CONTENTS_NOW.search(URL.sub(_LINK, sentence).strip()))


def points_somewhere(sentence: str) -> bool:
    """A link (not to one work item, nor an asset) or a ticket key, named with a system or a channel: a pointer to
    keep. What names the system is a word of the sentence or the link's host, never its path (".../dashboard-icons/
    svg/x.svg" names no dashboard); a sentence that is nothing but links says nothing of what they are."""
    urls = [url.rstrip(".,;:!") for url in URL.findall(sentence)]
    link = any(not _WORK_ITEM_URL.search(url) and not _ASSET_URL.search(url) for url in urls)
    words = _HOST.sub(r"\1", sentence)
    if urls and not re.search(r"[^\W\d_]{2,}", URL.sub(" ", sentence)):
        return False
    return bool((link or TICKET.search(sentence)) and (REFERENCE_HINT.search(words) or _CHANNEL.search(sentence)))


def repositories_shown(message) -> set[str]:
    """The names of the repositories a message shows the session working in (its folder's name, a remote that
    `git remote -v` printed): a link to one of those is the project's own address, not a pointer to keep. Only
    what was shown before the user spoke counts: a repository they announce and then move to is news."""
    names = {re.split(r"[\\/]", message.cwd.rstrip("\\/"))[-1].lower()} if message.cwd else set()
    for block in message.content if message.role == "user" else []:
        text = block.get("content") if isinstance(block, dict) and block.get("type") == "tool_result" else None
        if not isinstance(text, str):  # a list of blocks, as untrusted as the rest: a text may be anything
            text = " ".join(str(b.get("text") or "") for b in text if isinstance(b, dict)) if isinstance(text, list) else ""
        names |= {m.group(1).lower() for m in _REMOTE_LINE.finditer(text)}
    return names - {""}


_REMOTE_LINE = re.compile(r"^\w[\w.-]*\s+\S+?[/:]([\w.-]+?)(?:\.git)?/?\s+\((?:fetch|push)\)", re.M)


# A repository's own address: on a code host, or ending in .git. A dashboard, wiki page or tracker whose path merely
# ends in the folder's name ("https://grafana.acme.io/d/x1/dashboard" in ~/dashboard) is a pointer to keep.
_CODE_HOSTS = frozenset(("github.com", "bitbucket.org", "codeberg.org", "git.sr.ht", "dev.azure.com"))
_CODE_HOST_LABELS = frozenset(("gitlab", "gitea", "git"))  # gitlab.acme.io, git.acme.io: a self-hosted one
_OWNER_AND_NAME = re.compile(r"https?://([^/\s]+)/[^/\s]+/", re.I)  # a host, then at least owner/name


def repository_of(url: str) -> str:
    """"https://github.com/owner/name.git" -> "name" (the last part of the path, without ".git"); "" for a link that
    is not a repository's address. The host is tested label by label: a pattern over it backtracked for each dot."""
    url = url.rstrip("/.,;:!")
    found = _OWNER_AND_NAME.match(url)
    host = found.group(1).lower() if found else ""
    labels = host.split(".")
    on_code_host = (".".join(labels[-2:]) in _CODE_HOSTS or ".".join(labels[-3:]) in _CODE_HOSTS
                    or not _CODE_HOST_LABELS.isdisjoint(labels[:-1]))
    if not (on_code_host or url.lower().endswith(".git")):
        return ""
    return re.sub(r"\.git$", "", url.rsplit("/", 1)[-1]).lower()


def only_links_to(repositories: set[str], text: str) -> bool:
    """Every link in `text` leads to one of `repositories` (the session's own: its address is no pointer)."""
    urls = URL.findall(text)
    return bool(urls) and all(repository_of(url) in repositories - {""} for url in urls)
