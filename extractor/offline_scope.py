"""Whether a rule-shaped sentence is about the thing at hand (issue 20): one thing pointed at ("for this badge"), a
"don't" on editing a part of the work in front of the user, a standing word that only says something keeps happening.
Split from offline_lang.py, which reads a sentence's other markers of the moment; written from general
knowledge of each covered language, not from any session's transcript."""

from __future__ import annotations

import re

# "Always use the same colour as the button above for this badge", "avoid the loop in that function": a rule-shaped
# sentence about one thing pointed at is about that thing, whatever its "always" (the project, the repo or the team
# pointed at is everything the work is about: "always use pnpm in this repo"; a manner spelled out is how every such
# thing is done: "always write commit messages in this format: type(scope): summary", "run the checks in this order").
_EVERYTHING = (r"(?!(?:project|repo|repository|codebase|code ?base|app|application|site|website|product|team|company|"
               r"workspace|monorepo|org|organi[sz]ation|kind|type|sort|way|case|reason|purpose|matter|projet|dépôt|"
               r"format|style|order|language|tone|convention|manner|fashion|"
               r"proyecto|repositorio|projeto|repositório|projekt|проект\w*|репозитори\w*)s?\b)")
_ONE_THING = re.compile(r"\b(?:for|on|in|to|from|of|with|into|inside|at) (?:this|that|these|those) " + _EVERYTHING + r"\w+"
                        r"|\b(?:pour|dans|sur|à|avec) (?:ce|cet|cette|ces) " + _EVERYTHING + r"\w+"
                        r"|\b(?:para|en|con|em|com) (?:este|esta|estos|estas|ese|esa|esse|essa) " + _EVERYTHING + r"\w+"
                        r"|\b(?:neste|nesta|nesse|nessa|deste|desta|desse|dessa) " + _EVERYTHING + r"\w+"
                        r"|\b(?:für|in|an|auf|mit|bei) (?:diese[nmrs]?) " + _EVERYTHING + r"\w+"
                        r"|\b(?:для|в|на|с|к) (?:этого|этой|этом|этих|этот|эту) " + _EVERYTHING + r"\w+"
                        r"|(?:这个|这些|那个|この|その)(?!项目|仓库|プロジェクト|リポジトリ)", re.I)


# "Siempre me sale el mismo error", "总是同样的错误": a standing word that says something keeps happening, not a rule.
_SAME = re.compile(r"\b(?:same|le même|la même|les mêmes|el mismo|la misma|los mismos|o mesmo|a mesma|der gleiche|die gleiche|"
                   r"das gleiche|derselbe|dieselbe|dasselbe|одна и та же|один и тот же|то же самое|та же|тот же)\b"
                   r"|(?:同样|一样|相同|同じ)", re.I)


def same_again(sentence: str) -> bool:
    return bool(_SAME.search(sentence))


# "Le test échoue toujours", "il est toujours cassé", "j'ai toujours la même erreur": after a subject and a verb of
# failure or state in the present indicative, French "toujours" means "still", a report of the moment; an imperative
# ("utilise toujours pnpm") or a habit ("on utilise toujours pnpm", "je veux toujours ...") is a rule. The subject is
# needed because the imperative of an -er verb is spelled as its indicative ("affiche toujours l'erreur complète").
# Where "always" is its own word (siempre, sempre, immer, всегда, 总是), one next to a failure verb still reports a
# symptom ("el test siempre falla en CI", "der Build bricht immer ab"), not a rule; English asks for an imperative.
_FR_SUBJECT = (r"(?:\b(?:je|tu|il|elle|on|nous|vous|ils|elles|ça|ca|cela|ceci)\s+|\b[jc]'|\b(?:le|la|les|mon|ma|mes|ton|"
               r"ta|tes|son|sa|ses|notre|nos|votre|vos|leur|leurs|ce|cet|cette|ces|un|une|des)\s+[\w-]+\s+(?:[\w-]+\s+){0,2}?"
               r"|\bl'[\w-]+\s+(?:[\w-]+\s+){0,2}?)(?:(?:ne|me|te|se|le|la|les|lui|leur|y|en)\s+|[nmtsl]')*")
_FR_FAILS = (r"(?:échoue|échouent|plante|plantent|crashe|crashent|bloque|bloquent|bugu?e|buguent|beugue|freeze|freezent|"
             r"rame|rament|casse|cassent|marche|marchent|fonctionne|fonctionnent|apparaît|apparait|apparaissent|"
             r"vois|voit|voyons|voient)")  # not "reste", "tourne", "charge": "le code reste toujours en anglais" is a rule
_FR_WRONG = (r"(?:(?:la|le|les|l'|une?|des|cette|ce|cet)\s*(?:même|mêmes|ancien|ancienne|anciens|vieux|vieille)\b"
             r"|(?:une?|l'|la|le|des|les|cette|ce|cet|d')\s*(?:erreurs?|exceptions?|problèmes?|bugs?|soucis?|crash|"
             r"warnings?|avertissements?|500|404|403|401|timeout)\b"
             r"|(?:en (?:erreur|échec|panne|cours)|cassée?s?|rouges?|vides?|blanche?s?|bloquée?s?|plantée?s?|lente?s?|"
             r"ko|down|null|undefined|là|présente?s?|visibles?|absente?s?|manquante?s?|rien)(?![\w-]))")
_REPORTED_ALWAYS = re.compile(
    r"(" + _FR_SUBJECT + _FR_FAILS + r"\s+)toujours\b(?!\s+pas\b)"
    r"|(" + _FR_SUBJECT + r"[\w-]+\s+)toujours(?=\s+" + _FR_WRONG + r")"
    r"|(\b(?:falla|fallan|peta|petan|crashea|crashean|se (?:rompe|rompen|cuelga|cuelgan|cae|caen|bloquea|bloquean)"
    r"|falha|falham|quebra|quebram|trava|travam|crasha|crasham|dá erro|dão erro|scheitert|scheitern|crasht|crashen"
    r"|hängt|hängen|падает|падают|ломается|ломаются|виснет|виснут|зависает|зависают|вылетает|вылетают)\s+)"
    r"(?:siempre|sempre|immer|всегда)\b"
    r"|\b(?:siempre|sempre|всегда)(?=\s+(?:falla|fallan|peta|petan|crashea|crashean|se (?:rompe|rompen|cuelga|cuelgan|"
    r"cae|caen|bloquea|bloquean)|da error|dan error|falha|falham|quebra|quebram|trava|travam|crasha|crasham|dá erro|"
    r"dão erro|падает|падают|ломается|ломаются|виснет|виснут|зависает|зависают|вылетает|вылетают)\b)"
    r"|(\b(?:schlägt|schlagen|stürzt|stürzen|bricht|brechen)\s+(?:[\w-]+\s+){0,3}?)immer(?=\s+(?:[\w-]+\s+){0,3}?"
    r"(?:fehl|ab)\b)"
    r"|(?:总是|始终|每次都)(?=(?:会)?(?:失败|崩溃|报错|出错|卡住|挂掉|挂了))|(?:いつも|毎回)(?=(?:テストが)?(?:失敗|落ち|クラッシュ|エラー))",
    re.I,
)


# "El servidor siempre devuelve 500", "der Server gibt immer 500 zurück", "the server always returns 500": any verb in
# the present said of a third-person subject that is neither the user nor the assistant reports what the system does;
# an imperative ("usa siempre pnpm") has no subject. A modal ("el código siempre debe ..."), a convention that stays
# ("le code reste toujours en anglais"), "il faut" and a habit of "we"/"on" still state a rule. German subjects are
# a capitalised noun and its verb comes second ("Die Tests immer vor dem Commit ausführen" is an infinitive rule).
_CLAUSE_START = r"(?:^|(?<=[,;:])\s*|\b(?:but|and|because|pero|y|porque|mas|e|mais|et|car|donc|aber|und|denn|но|и)\s+)"
# (nor the user's own team, whose habit is a convention: "nuestro equipo siempre usa pnpm"; nor "next time"; nor the
# project, the repository or its code, whose "always" is the project's convention: "ce projet utilise toujours pnpm")
_NOT_US = (r"(?!(?:users?|usuari[oa]s?|usuári[oa]s?|utilisat(?:eur|rice)s?|benutzer|nutzer|assistant|asistente|"
           r"assistente|agente?s?|claude|ia|ai|ki|model|modelo|bot|team|teams|equipo|equipos|équipe|équipes|equipe|equipes|"
           r"empresa|entreprise|company|firma|próxima|proxima|prochaine|next|projet|proyecto|projeto|project|projekt|"
           r"repo|repos|repository|repositorio|repositório|dépôt|codebase|code|código|codigo)\b)")
_NOT_RULE_VERB = (r"(?!(?:must|should|has to|have to|needs?|is|are|stays?|remains?|goes|go|debe|deben|tiene que|tienen que|"
                  r"hay que|queda|quedan|permanece|permanecen|va|van|deve|devem|tem que|têm que|precisa|precisam|fica|"
                  r"ficam|vai|vão|doit|doivent|devrait|devraient|faut|reste|restent|vont|muss|müssen|soll|sollen|"
                  r"bleibt|bleiben|kommt|kommen|gehört|gehören|должен|должна|должно|должны|нужно|надо"
                  # nor a word that is no verb: "los commits siempre en inglés" is a convention with its verb left out
                  r"|en|con|de|a|por|para|el|la|los|las|un|una|em|com|no|na|o|os|as|um|uma|que|in|on|at|to|the|an|for)\b)")
_DET = {"es": r"(?:el|la|los|las|un|una|mi|mis|su|sus|nuestr[oa]s?|est[ea]s?|es[ea]s?)",
        "pt": r"(?:o|a|os|as|um|uma|meu|minha|meus|minhas|noss[oa]s?|est[ea]s?|ess[ea]s?)",
        "fr": r"(?:le|la|les|un|une|mon|ma|mes|son|sa|ses|notre|nos|leur|leurs|ce|cet|cette|ces)",
        "en": r"(?:the|a|an|my|our|this|that|these|those|its|their|his|her)"}
# the noun and up to two words after it ("de producción"), none of them a modal ("el código deve sempre ...")
_OUR_DE = r"(?!(?:Projekt|Repo|Repository|Code|Team|Firma)\b)"  # _NOT_US for German's capitalised nouns
_NOUN = _NOT_US + r"[\w-]+\s+(?:" + _NOT_RULE_VERB + r"[\w-]+\s+){0,2}?"
_NP = r"\s+" + _NOUN
_SYSTEM_ALWAYS = re.compile(
    r"(" + _CLAUSE_START + _DET["es"] + _NP + r")siempre(?=\s+" + _NOT_RULE_VERB + r"[\w-]+)"
    r"|(" + _CLAUSE_START + _DET["pt"] + _NP + r")sempre(?=\s+" + _NOT_RULE_VERB + r"[\w-]+)"
    r"|(" + _CLAUSE_START + r"(?:" + _DET["fr"] + _NP + r"|l'" + _NOUN + r"|(?:il|elle|ils|elles|ça|cela)\s+)"
    r"(?:(?:ne|me|se|le|la|les|lui|leur|y|en)\s+|[nmsl]')*" + _NOT_RULE_VERB + r"[\w-]+\s+)toujours\b(?!\s+pas\b)"
    r"|(" + _CLAUSE_START + r"(?-i:(?:Der|Die|Das|Ein|Eine|Mein|Meine|Unser|Unsere|Dieser|Diese|Dieses|der|die|das|ein|eine)"
    r"\s+(?:[a-zäöüß]+\s+)?" + _OUR_DE + r"[A-ZÄÖÜ][\w-]*\s+)" + _NOT_RULE_VERB + r"(?-i:[a-zäöüß]+)\s+(?:[\w-]+\s+){0,2}?)immer\b"
    r"|(" + _CLAUSE_START + _DET["en"] + _NP + r")always(?=\s+" + _NOT_RULE_VERB + r"[a-z]+s\b)"
    r"|(^(?!(?:я|ты|вы|мы|всегда|пожалуйста)\b)[а-яё-]+\s+(?:[а-яё-]+\s+)?)всегда(?=\s+" + _NOT_RULE_VERB
    + r"[а-яё]+(?:ет|ёт|ит|ют|ят|ут|ется|ится|ются|ятся)\b)",
    re.I,
)


def without_reported_always(sentence: str) -> str:
    """The sentence without a "toujours" that means "still", an "always" that reports a symptom or one said of what
    the system does (see above)."""
    kept = _REPORTED_ALWAYS.sub(lambda m: "".join(g for g in m.groups() if g), sentence)
    return _SYSTEM_ALWAYS.sub(lambda m: "".join(g for g in m.groups() if g), kept)


def about_one_thing(sentence: str) -> bool:
    return bool(_ONE_THING.search(sentence))


def edit_at_hand(sentence: str) -> bool:
    """"Ne change pas le comportement métier, uniquement le câblage IA", "don't touch the header": a "don't" on editing
    something names a part of what is being edited now, unless a reason says what holds of that kind of thing ("don't
    touch the migration files, they are generated"). Only a standing marker (_STANDING) makes it last otherwise."""
    match = _EDIT_DONT.search(sentence)
    if not match:
        return False
    rest = re.split(r"[,;:，；、]|\s[-–—]\s|\s(?:because|since|as|car|parce que|porque|pois|weil|da|потому что|так как)\s",
                    sentence[match.end():], maxsplit=1)
    if len(rest) > 1:
        return bool(_ONLY.match(rest[1].strip()))
    english = match.group(0)[:2].lower() == "do"
    return not (english and _A_KIND.match(sentence, match.end()))


# English only (its bare plural names a kind; "les tests", "die Tests" do not say which): "don't modify tests to make them
# pass", "don't rewrite history on shared branches", "don't touch prod" name a kind of thing, not a part of the work at
# hand ("the header", "that", "main.py", "Foo"); and "... without a migration", "... just to get CI green" say when it
# holds, which is beyond the step (a hostile review found these dropped as one-offs, all saved on f869ae8).
_A_KIND = re.compile(r"\s+(?!(?:the|this|that|these|those|my|our|your|his|her|its|their|a|an|any|anything|everything|"
                     r"something|nothing|it|them|another|other|some|what|how|here|there|yet|now|so|too)\b)"
                     r"[a-z][a-z-]*(?![\w/`'\"]|\.\w)"
                     r"|.*\b(?:without|unless|just to|only to|to make|to get)\b")  # case kept: "Foo", "README" name one thing
# What the one change at hand may touch instead: "..., only the wiring", "uniquement le câblage", "只改前端".
_ONLY = re.compile(r"(?:only|just|uniquement|seulement|juste|solo|solamente|únicamente|apenas|somente|só|nur|"
                   r"lediglich|только|лишь)\b|(?:只|仅|だけ)", re.I)
_EDIT_DONT = re.compile(
    r"\b(?:don'?t|do not)\s+(?:\w+\s+)?(?:change|modify|touch|edit|alter|rewrite|refactor|rename|move|delete|remove)\b"
    r"|\bne (?:change|modifie|touche|supprime|renomme|déplace|réécris|efface)\w* pas\b|\bn'(?:altère|édite|efface)\w* pas\b"
    r"|\bno (?:cambies|modifiques|toques|borres|elimines|renombres|muevas|reescribas)\b"
    r"|\bnão (?:mude|modifique|mexa|apague|altere|remova|renomeie|mova|reescreva)\b"
    r"|\b(?:ändere|verändere|lösche|entferne|bearbeite|fasse|verschiebe)\b.{0,30}\bnicht\b"
    r"|\bне (?:трогай|меняй|изменяй|удаляй|переименовывай|редактируй|переписывай)\b"
    r"|(?:不要|别|不许)(?:再)?(?:改|修改|动|删|删除|重写)|(?:変更|修正|削除|編集|書き換え)(?:は)?しないで|触らないで",
    re.I,
)


# "Do not do anything else", "ne fais rien d'autre", "不要做别的": "else" measures against what was just asked, so the
# sentence bounds the task at hand; "don't use anything else than pnpm" names what to use instead, and stays a rule.
# Not "otherwise" (", otherwise CI breaks" gives a rule its reason) nor a bare "más" (Spanish "more": "es más rápido").
_ELSE = re.compile(r"\b(?:else|d'autre|nada más|anderes|другого|другое)\b(?!\s+(?:than|but|except|que|als|кроме)\b)"
                   r"|(?:别的|其他的?(?:事|东西)|他のこと|ほかのこと)", re.I)
_COMPARED = re.compile(r"\bthan (?:any|every|some)\w* else\b", re.I)  # "faster than anything else": a comparison


def bounds_the_task(sentence: str) -> bool:
    return bool(_ELSE.search(_COMPARED.sub(" ", sentence)))


# A decision says it was weighed: against what it replaces ("switch to", "instead of", "not X"), as a decision in so many
# words ("we decided", "the decision is"), or with a reason (the caller checks that). "Let's use React for the
# front-end", "let's use a take-home of about 25k", "sure, let's do rentcast" pick the stack the code will show or a
# figure for one calculation; nothing in the words says it outlasts the step.
_WEIGHED = re.compile(r"\b(?:switch(?:ing)? to|migrat\w* to|mov(?:e|ing) to|adopt\w*|stick(?:ing)? with|instead of|"
                      r"rather than|(?:we|i) (?:chose|picked|decided)|(?:i|we)'?ve decided|decided to|the decision is)\b"
                      r"|,?\s+not\s+[\w.+-]+\s*[.!]?$", re.I)


def decision_weighed(sentence: str) -> bool:
    return bool(_WEIGHED.search(sentence))


# "I dont want to change the city, I want it automatically detected", "I don't want to disable it": the user weighing
# two ways of doing the thing at hand, or turning one down for the thing pointed at, says what they want now. A rule for
# the agent is said to it ("I don't want you to ...", "don't ...") or says it holds beyond the moment (the caller checks
# for a standing word); "I don't want to make it only work for me" names no alternative and points at nothing.
_OWN_REFUSAL = re.compile(r"\bi (?:really |just )?(?:don'?t|do not) want to\b(?P<rest>.*)", re.I)
_NOW_INSTEAD = re.compile(r"\bi (?:just |really |actually |only )?want\b", re.I)
_AT_HAND = re.compile(r"\s+[a-z]+\s+(?:it|this|that)\s*(?:$|[,.;:!]|\s+(?:i|and|but|so|then)\b)", re.I)


def own_choice_now(sentence: str) -> bool:
    match = _OWN_REFUSAL.search(sentence)
    if not match:
        return False
    rest = match.group("rest")
    return bool(_NOW_INSTEAD.search(rest) or _AT_HAND.match(rest))


# The words before a statement about the user that make it someone else's words reported ("the error says I don't
# have access", "he said: ask me first", a quotation mark), or (for a fact) a case weighed or a guess ("would it be
# better if my shell is zsh", "I wonder if", "perhaps", "do you think"). A rule's own condition ("If you need more
# tools, ask me first") says when it holds: rules check only the first.
_REPORTED = re.compile(r"\b(?:says?|said|wrote|writes|reads|told|tells|claims?|dice|dit|sagt)\b|[\"“”„«»「」]|说|說", re.I)
_SUPPOSED = re.compile(
    r"\b(?:if|when|whether|suppose|supposing|unless|imagine|maybe|perhaps|wonder|assume|assuming|pretend|guess|think|"
    r"si|cuando|quand|se|wenn|falls|ob|если|когда)\b|如果|假如|假设|要是|万一|也许|可能|もし",
    re.I,
)


def reported(before: str) -> bool:
    """Whether `before` (the words leading to a statement) makes it someone else's words, reported."""
    return bool(_REPORTED.search(before))


def not_said_as_so(before: str) -> bool:
    """Whether `before` (the words leading to a statement about the user) makes it a case supposed, a guess or
    someone else's words rather than the user saying so."""
    return bool(_REPORTED.search(before) or _SUPPOSED.search(before))
