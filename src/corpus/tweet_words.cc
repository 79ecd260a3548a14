#include "corpus/tweet_words.h"

#include <deque>
#include <string>
#include <utility>

namespace infercost::corpus::internal {

namespace {

// Lists are written as one space-separated literal each: compact to read and
// to edit, split once at first use into views into the literal.

constexpr std::string_view kFunctionWords =
    "the i to a and you it is of in that my for this on be me just so have with but not at was all "
    "are your we like what do can if get they will up no out about one he she now how when his her "
    "it's i'm don't from there more some by an people today day know go time would much or their "
    "who been as really why them our did has had too new still only back because over then think "
    "very than here going got see its want can't were us never even also him need way good make "
    "could should any after right first being these those which where while into off again before "
    "down most many every through always yes am may might must does something nothing everything "
    "someone everyone anyone anything each other own same such both few last next well ever yet "
    "though although since until without against between during under above around behind "
    "beside near toward towards upon within across along among per via "
    "i've i'll i'd you're you've you'll you'd he's he'll he'd she's she'll she'd we're we've "
    "we'll we'd they're they've they'll they'd that's there's what's let's who's how's here's "
    "where's doesn't didn't couldn't won't wouldn't shouldn't isn't aren't wasn't weren't "
    "haven't hasn't hadn't ain't y'all gonna wanna gotta kinda sorta lemme gimme dunno "
    "myself yourself himself herself itself ourselves themselves mine yours ours theirs "
    "whose whom whatever whenever wherever whoever however therefore otherwise instead "
    "else either neither nor once twice half quite rather almost enough less least "
    "tonight tomorrow yesterday tho thru cuz cause bc w/ til till yall";

constexpr std::string_view kNouns =
    "day time year week thing man woman friend guy girl kid family home house life world game "
    "show movie song album video phone car job school class team fan night morning weekend "
    "moment person place story book picture photo post tweet thread account app update "
    "episode season series player coach match goal point shot win loss race trip flight hotel "
    "room bed door window street city town country state road train bus ticket seat line "
    "store shop restaurant bar cafe coffee beer drink meal dinner lunch breakfast pizza burger "
    "sandwich salad cake cookie snack dog cat puppy kitten bird horse baby mom dad brother sister "
    "son daughter wife husband boyfriend girlfriend cousin uncle aunt grandma grandpa neighbor "
    "boss coworker teacher student doctor nurse driver artist singer actor actress writer "
    "reporter president senator governor mayor leader member customer client user follower "
    "hour minute second month decade birthday holiday party concert festival event meeting "
    "interview exam test paper project report deadline plan idea question answer reason problem "
    "issue mistake chance choice decision change result price deal sale order package delivery "
    "product service brand company business market stock bank card bill fee tax loan job office "
    "desk computer laptop screen keyboard charger battery headphone camera speaker console "
    "controller server website link page email message text call voice podcast channel stream "
    "feed timeline notification password login bug feature version release launch review "
    "rating comment reply thumbnail playlist track beat verse chorus lyric band rapper dj "
    "stage crowd audience ticket queue shift paycheck salary raise promotion career resume "
    "apartment landlord rent kitchen bathroom garden yard pool beach lake river mountain park "
    "forest island sky sun moon star cloud storm wave tree flower plant leaf garden hill valley "
    "bridge tower airport station parking lot mall gym stadium arena court field track "
    "shirt shoe jacket hoodie dress hat bag wallet watch ring necklace glass bottle cup mug "
    "plate bowl spoon fork knife chair table couch sofa pillow blanket lamp mirror clock "
    "sandwich taco burrito noodle dumpling sushi steak chicken egg potato tomato onion apple "
    "banana orange lemon strawberry cherry grape peach mango donut bagel croissant pancake "
    "waffle muffin brownie pie cupcake smoothie latte espresso cocktail shot soda "
    "body head face eye ear nose mouth tooth hand arm leg foot heart brain back knee shoulder "
    "headache cold fever cough symptom vaccine shot mask hospital clinic appointment "
    "election vote campaign debate policy law court judge case protest rally speech "
    "article headline journalist network anchor interviewer documentary trailer sequel "
    "character villain hero plot ending scene chapter page novel author poem quote word "
    "sentence letter number list step rule goal dream wish memory feeling thought opinion "
    "vibe mood energy habit routine schedule alarm nap snack playlist meme joke prank "
    "challenge trend hashtag emoji selfie filter caption profile bio username handle "
    "subscriber viewer streamer gamer level boss quest map weapon skin patch server lag "
    "console controller tournament bracket draft trade contract rookie veteran captain "
    "referee penalty foul inning quarter half overtime playoff final trophy medal record "
    "engine tire wheel bike motorcycle truck van boat plane rocket satellite planet "
    "robot drone chip model dataset algorithm startup investor founder ceo engineer developer "
    "designer manager intern team meeting standup sprint ticket repo commit branch";

constexpr std::string_view kMassNouns =
    "music food water weather traffic money news work homework love fun stuff information "
    "advice help health rain snow sunshine wifi internet coffee tea milk bread rice pasta "
    "cheese chocolate ice cream sugar salt pepper garlic honey butter furniture luggage "
    "equipment software hardware data research evidence progress knowledge education "
    "freedom justice peace violence history science art math physics chemistry biology "
    "economics politics football soccer basketball baseball hockey tennis golf cricket "
    "boxing wrestling racing cycling running yoga fitness cardio sleep breakfast lunch "
    "dinner dessert laundry traffic pollution electricity gas fuel gold silver "
    "merch content feedback support security privacy stress anxiety drama gossip";

constexpr std::string_view kVerbs =
    "go going went gone goes get getting got gets make making made makes know knew known "
    "think thinking thought see seeing saw seen come coming came comes take taking took taken "
    "want wanted wants look looking looked looks give giving gave given use using used find "
    "finding found tell telling told ask asking asked work working worked works seem seemed "
    "feel feeling felt try trying tried leave leaving left call calling called keep keeping "
    "kept let start starting started begin began help helping helped show showing showed "
    "hear hearing heard play playing played run running ran move moving moved live living "
    "lived believe believed bring brought happen happened happening write writing wrote "
    "written sit sitting sat stand standing stood lose losing lost pay paying paid meet "
    "meeting met include included continue continued set learn learning learned change "
    "changed changing lead understand understood watch watching watched follow following "
    "followed stop stopping stopped create created speak speaking spoke read reading spend "
    "spending spent grow growing grew open opened opening walk walking walked offer offered "
    "remember remembered consider appear appeared buy buying bought wait waiting waited serve "
    "die dying died send sending sent expect expected build building built stay staying "
    "stayed fall falling fell cut reach reached kill remain suggest raise pass passed sell "
    "selling sold require report decide decided pull pulled eat eating ate eaten drink "
    "drinking drank sleep sleeping slept drive driving drove wake woke waking cook cooking "
    "cooked clean cleaning cleaned text texting texted post posting posted tweet tweeting "
    "tweeted share sharing shared scroll scrolling stream streaming streamed download "
    "downloaded upload uploaded subscribe subscribed unfollow unfollowed block blocked mute "
    "muted retweet retweeted like liked liking comment commented reply replied dm dming "
    "order ordered deliver delivered ship shipped return returned cancel cancelled refund "
    "refunded charge charged fix fixed fixing break broke breaking crash crashed update "
    "updated install installed restart restarted load loading loaded sing singing sang "
    "dance dancing danced laugh laughing laughed cry crying cried smile smiling smiled "
    "scream screaming screamed yell yelling yelled hug hugged kiss kissed miss missing "
    "missed hate hating hated enjoy enjoying enjoyed celebrate celebrating celebrated "
    "vote voting voted win winning won beat beating score scored train training trained "
    "travel traveling travelled fly flying flew visit visiting visited explore exploring "
    "study studying studied teach teaching taught graduate graduated apply applied hire "
    "hired quit quitting fired save saved saving spend wish wished hope hoped hoping pray "
    "praying prayed thank thanked wonder wondering wondered guess guessing guessed agree "
    "agreed disagree argue arguing argued complain complaining complained deserve deserved "
    "recommend recommended review reviewed rate rated test tested check checking checked "
    "finish finishing finished plan planning planned prepare preparing prepared";

constexpr std::string_view kAdjectives =
    "new good great big little old long high small large next early young important few "
    "public bad same able last late hard real best better sure free full special whole "
    "clear recent certain personal open red black white blue green yellow purple pink "
    "orange brown gray grey dark light hot cold warm cool wet dry loud quiet busy lazy "
    "strong weak rich poor cheap expensive fast slow quick easy simple difficult heavy "
    "short tall huge tiny deep wide fresh clean dirty empty safe dangerous healthy sick "
    "tired hungry thirsty sleepy ready late early local national global international "
    "official final main major minor serious funny crazy wild weird strange normal "
    "random basic honest fair true false single double main entire whole actual "
    "digital online offline virtual live social mobile wireless smart modern classic "
    "vintage retro original official limited exclusive rare popular famous viral "
    "trending latest upcoming previous current daily weekly monthly annual second third "
    "sunny cloudy rainy snowy windy stormy foggy humid chilly freezing boiling spicy "
    "sweet sour salty bitter crispy creamy juicy cheesy greasy soft hard smooth rough "
    "sharp blunt bright shiny fancy plain busy crowded empty packed sold late overdue";

constexpr std::string_view kAdverbs =
    "really so very just too actually literally honestly seriously totally completely "
    "absolutely definitely probably maybe finally already almost always never sometimes "
    "often usually rarely barely hardly nearly quickly slowly suddenly recently lately "
    "currently basically apparently obviously clearly simply truly deeply highly extremely "
    "incredibly super mostly mainly especially exactly perfectly badly easily officially "
    "immediately instantly constantly randomly secretly lowkey highkey legit fully "
    "together away home soon later tonight everywhere somewhere anywhere nowhere outside "
    "inside upstairs downstairs forever ago anyway anymore yet still again";

constexpr std::string_view kPositive =
    "love loved loving lovely amazing awesome great good best better excellent fantastic "
    "wonderful beautiful happy happier happiest glad excited exciting fun funny perfect "
    "brilliant incredible nice cool sweet cute adorable gorgeous stunning impressive "
    "outstanding superb delightful enjoy enjoyed enjoying enjoyable thrilled grateful "
    "thankful thanks thank blessed proud inspiring inspired favorite favourite fav win won "
    "winning winner success successful congrats congratulations celebrate yay wow hooray "
    "fabulous magnificent marvelous pleasant pleased charming cheerful joy joyful hope "
    "hopeful hopefully recommend helpful kind kindness generous friendly supportive smile "
    "smiling laugh laughing epic legendary fire lit dope solid fresh delicious tasty yummy "
    "comfy cozy relaxing peaceful calm safe strong healthy positive optimistic confident "
    "brave bright fortunate lucky worth worthwhile valuable useful reliable smooth easy "
    "effortless flawless masterpiece genius hero adore admire appreciate appreciated "
    "phenomenal remarkable extraordinary spectacular terrific splendid heavenly blissful "
    "ecstatic elated overjoyed satisfied satisfying refreshing uplifting encouraging "
    "motivated victory triumph champion champions stellar classy elegant wholesome "
    "heartwarming touching beloved dreamy magical gem goat slay slayed iconic queen king "
    "vibes goals blessing miracle paradise bliss fantastic thrilling stoked pumped";

constexpr std::string_view kNegative =
    "hate hated hating awful terrible horrible worst bad worse sad sadly angry mad upset "
    "annoyed annoying frustrated frustrating disappointed disappointing disappointment "
    "disgusting gross boring bored tired exhausted sick hurt hurts pain painful broken "
    "broke fail failed failing failure lose lost losing loser ugly stupid dumb useless "
    "pathetic ridiculous nonsense trash garbage sucks sucked crap cringe depressed "
    "depressing lonely miserable scared afraid fear worried worry anxious stressed "
    "stressful nightmare disaster tragic tragedy crying cried tears rude mean cruel "
    "unfair wrong problem issue error bug crash crashed slow late delayed delay "
    "cancelled canceled scam fake liar lies lying toxic dead dying died ruined ruin mess "
    "messy dirty overpriced expensive regret sorry unfortunately unhappy hopeless "
    "helpless worthless weak lazy rage furious outraged outrage shame shameful "
    "embarrassing awkward bitter dreadful horrendous atrocious abysmal mediocre "
    "heartbroken devastated gutted betrayed ignored insulted offended disgusted "
    "horrified terrified panic panicking sucky lame shady sketchy unacceptable "
    "incompetent unreliable broken glitchy buggy laggy nasty filthy stinks worthless";

constexpr std::string_view kSlang =
    "lol omg lmao haha hahaha hahahaha rofl tbh imo imho idk idc ikr smh fml wtf omfg brb "
    "btw fyi irl ngl fr nvm ty thx pls plz ppl bc rn af asf tho bruh bro sis fam yo ya yep "
    "yup nope nah ok okay k oh ah aw aww awww ugh ugh ughh hmm hmmm meh yikes oops whoa wow "
    "woah yay yess yesss yessss nooo noooo nooooo sooo soooo sooooo pleaseee whyyy ahhh "
    "ahhhh omgggg lmfao lolol xoxo hbd gg gm gn wyd hmu tfw mfw irl istg iykyk periodt "
    "bestie stan stans simp sus cap nocap lowkey highkey deadass bet vibe vibing mood "
    "same literally dying screaming crying im u ur r y da dat dis wat";

constexpr std::string_view kTopics =
    "nba nfl mlb nhl fifa uefa ufc f1 espn lakers celtics warriors knicks bulls heat nets "
    "yankees dodgers mets patriots cowboys packers chiefs eagles giants arsenal chelsea "
    "liverpool barcelona madrid juventus bayern psg messi ronaldo lebron curry brady "
    "iphone android samsung apple google microsoft amazon netflix spotify youtube tiktok "
    "instagram facebook twitter reddit discord twitch snapchat whatsapp zoom uber tesla "
    "nintendo playstation xbox switch steam minecraft fortnite pokemon zelda mario "
    "covid pandemic lockdown quarantine vaccine booster bitcoin ethereum crypto nft "
    "blockchain ai chatbot python javascript linux windows mac ios chrome firefox "
    "starbucks mcdonalds chipotle walmart target costco ikea disney marvel dc pixar "
    "hbo hulu oscars grammys emmys superbowl olympics worldcup wimbledon coachella "
    "london paris tokyo berlin rome madrid toronto chicago boston seattle austin miami "
    "vegas denver atlanta dallas houston phoenix portland brooklyn manhattan california "
    "texas florida york jersey ohio canada mexico brazil india china japan korea "
    "australia germany france italy spain ireland scotland england nigeria kenya "
    "monday tuesday wednesday thursday friday saturday sunday january february march "
    "april june july august september october november december christmas halloween "
    "thanksgiving easter valentine summer winter spring autumn fall";

constexpr std::string_view kNames =
    "alex sam chris jordan taylor jamie morgan casey riley jessie drew max ben jack "
    "james john mike dave matt nick tom josh ryan kevin brian eric jason adam dan "
    "emma olivia ava mia sophia isabella amelia emily sarah jess kate lucy anna laura "
    "rachel hannah grace chloe zoe lily ella megan lauren nina maria ana sofia lucas "
    "leo noah liam ethan mason logan aiden carlos diego juan luis pedro ahmed omar ali "
    "fatima aisha priya raj arjun wei li chen yuki kenji hana min jin soo "
    "the real official its just not mr ms dr doc big lil king queen daily news live "
    "fan club hq tv radio media blog team group crew world life vibes music films "
    "smith jones brown miller davis wilson moore clark lewis walker hall young king";

constexpr std::string_view kHashtagWords =
    "tbt fbf ootd nowplaying mcm wcw followfriday ff tgif instagood photooftheday "
    "mondaymotivation throwbackthursday sundayfunday fridayfeeling wfh selfcare "
    "foodie vegan travelgram fitfam gymlife kpop bts anime gaming esports "
    "100daysofcode datascience machinelearning deeplearning tokyo2020 covid19 "
    "blacklivesmatter metoo climatechange sustainability startup entrepreneur "
    "marketing smallbusiness giveaway contest sweepstakes breaking breakingnews "
    "nfldraft nbafinals worldseries marchmadness stanleycup championsleague "
    "premierleague laliga oscars2021 grammys2021 gameofthrones strangerthings "
    "mentalhealth motivation inspiration quoteoftheday love happy fail epicfail";

constexpr std::string_view kAccented =
    "café cafés naïve résumé fiancé fiancée cliché façade jalapeño piñata señor señora "
    "mañana niño jalapeños crème brûlée soufflé entrée sauté purée rosé protégé "
    "déjà über Zürich Montréal Québec Málaga Bogotá Medellín Pokémon Beyoncé Björk "
    "Mötley Häagen Nestlé Chloé Renée José Zoë Noël André Ségolène Dvořák Gdańsk "
    "Kraków Reykjavík Tromsø Malmö Düsseldorf München Köln São Paulo Brasília Curaçao "
    "voilà touché passé décor naïveté coördinate";

constexpr std::string_view kAccentedPhrases[] = {
    "São Paulo",       "déjà vu",    "crème brûlée",   "piña colada", "jalapeño poppers", "café au lait",
    "Beyoncé concert", "Pokémon Go", "naïve question", "my résumé",   "Ciudad de México",
};

constexpr std::string_view kCjk =
    "ありがとう こんにちは おはよう かわいい 大好き 最高 すごい 楽しい 嬉しい 悲しい 今日 "
    "東京 大阪 日本 ラーメン 寿司 アニメ 映画 音楽 友達 頑張って お疲れ様 よろしく おめでとう "
    "你好 谢谢 北京 上海 中国 我爱你 加油 好吃 朋友 开心 太好了 生日快乐 "
    "안녕하세요 사랑해 감사합니다 서울 대박 최고 화이팅 한국 고마워 오늘 진짜";

constexpr std::string_view kEmoji =
    "😂 ❤️ 😍 🤣 😊 🙏 💕 😭 😘 👍 😅 👏 😁 🔥 🥰 💔 💖 💙 😢 🤔 😆 🙄 💪 😉 ☺️ 👌 🤗 "
    "💜 "
    "😔 "
    "😎 "
    "😇 🌹 🤦 🎉 💞 ✌️ ✨ 🤷 😱 😌 🌸 🙌 😋 💗 💚 😏 💛 🙂 💓 🤩 😄 😀 🖤 😃 💯 🙈 👇 "
    "🎶 "
    "😒 "
    "🤭 "
    "❣️ 😜 💋 👀 😪 😑 💥 🙋 😞 😩 😡 🤪 👊 ☀️ 😥 🤤 👉 💃 😳 ✋ 😚 😝 😴 🌟 😬 🙃 🍀 "
    "🌷 "
    "😻 "
    "😓 "
    "⭐ ✅ 🥺 🌈 😈 🤘 💦 ✔️ 😣 🏃 💐 ☹️ 🎊 💘 😠 ☝️ 😕 🌺 🎂 🌻 😐 🖕 💝 🙊 😹 🗣️ 💫 "
    "💀 "
    "👑 "
    "🎵 "
    "🤞 😛 🔴 😤 🌼 😫 ⚽ 🤙 ☕ 🏆 🧡 🎁 ⚡ 🌞 🎈 ❌ ✊ 👋 😲 🌿 🤫 👈 😮 🙆 🍻 🍃 🐶 "
    "💁 "
    "🚨 "
    "🏀 "
    "👍🏻 👍🏽 👏🏾 🙏🏼 💪🏿 🤷‍♀️ 🤦‍♂️ 🏳️‍🌈 🇺🇸 🇬🇧 🇯🇵 🇧🇷 🧵 📈 📉 💸 🚀 🤖 "
    "💻 "
    "📱 "
    "🎮";

constexpr std::string_view kEmoticons[] = {
    ":)", ":(", ":D",  ":P",  ";)",  ":/",  ":-)", ":-(", "<3",          "</3",
    "xD", "XD", ":')", "^_^", "-_-", "o_O", "T_T", ":o",  "¯\\_(ツ)_/¯", "(╯°□°)╯︵┻━┻",
};

constexpr std::string_view kDomains =
    "www t co com org net io uk us ca de fr jp in news blog m mobile amp "
    "twitter youtube youtu be instagram facebook fb tiktok reddit nytimes washingtonpost "
    "bbc cnn theguardian reuters bloomberg forbes medium github spotify open apple "
    "amazon google goo gl bit ly buff ow tinyurl linkedin wikipedia en imdb espn "
    "theverge techcrunch wired vox buzzfeed substack imgur pic";

constexpr std::string_view kUrlWords =
    "status watch v p r comments article articles story stories post posts news world us "
    "politics business tech technology sport sports entertainment culture health science "
    "opinion live video videos photo photos gallery track album playlist episode index "
    "html htm php amp utm source medium campaign ref share social twitter s id si feature "
    "wiki en search q lang en-us blog 2019 2020 2021 2022 2023 2024 dp gp product item "
    "the a of to and in for how why what new best top first after says finally";

constexpr std::string_view kSentenceEnds = ". ! ? !! !!! !!!! ... .... ?! ?? ??? !?";

constexpr std::string_view kSymbols =
    ", : ; - -- — – ' \" “ ” ‘ ’ ( ) [ ] * / \\ & &amp; &gt; &lt; @ # $ % + = _ ~ | < > ° … • → ← "
    "♥ ★ ☆ ✓ ™ © € £ ¥";

constexpr std::string_view kNumberSuffixes = "k K m M am pm st nd rd th x";

void split_into(std::string_view text, std::vector<std::string_view>& out) {
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    size_t j = i;
    while (j < text.size() && text[j] != ' ') ++j;
    if (j > i) out.push_back(text.substr(i, j - i));
    i = j;
  }
}

std::string plural_of(std::string_view noun) {
  std::string p(noun);
  auto ends_with = [&](std::string_view s) {
    return noun.size() >= s.size() && noun.substr(noun.size() - s.size()) == s;
  };
  auto vowel = [](char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; };
  if (noun == "man") return "men";
  if (noun == "woman") return "women";
  if (noun == "person") return "people";
  if (noun == "child") return "children";
  if (noun == "foot") return "feet";
  if (noun == "tooth") return "teeth";
  if (noun == "leaf") return "leaves";
  if (noun == "knife") return "knives";
  if (noun == "wife") return "wives";
  if (noun == "life") return "lives";
  if (noun == "shelf") return "shelves";
  if (noun == "potato") return "potatoes";
  if (noun == "tomato") return "tomatoes";
  if (noun == "hero") return "heroes";
  if (ends_with("s") || ends_with("x") || ends_with("ch") || ends_with("sh") || ends_with("z"))
    return p + "es";
  if (noun.size() >= 2 && noun.back() == 'y' && !vowel(noun[noun.size() - 2])) {
    p.pop_back();
    return p + "ies";
  }
  return p + "s";
}

TweetWords build_words() {
  TweetWords w;
  // Each space-separated list and the vocabulary it fills.
  const std::pair<std::string_view, std::vector<std::string_view> TweetWords::*> lists[] = {
      {kFunctionWords, &TweetWords::function_words},
      {kNouns, &TweetWords::nouns},
      {kMassNouns, &TweetWords::mass_nouns},
      {kVerbs, &TweetWords::verbs},
      {kAdjectives, &TweetWords::adjectives},
      {kAdverbs, &TweetWords::adverbs},
      {kPositive, &TweetWords::positive},
      {kNegative, &TweetWords::negative},
      {kSlang, &TweetWords::slang},
      {kTopics, &TweetWords::topics},
      {kNames, &TweetWords::names},
      {kHashtagWords, &TweetWords::hashtag_words},
      {kAccented, &TweetWords::accented},
      {kCjk, &TweetWords::cjk},
      {kEmoji, &TweetWords::emoji},
      {kDomains, &TweetWords::domains},
      {kUrlWords, &TweetWords::url_words},
      {kSentenceEnds, &TweetWords::sentence_ends},
      {kSymbols, &TweetWords::symbols},
      {kNumberSuffixes, &TweetWords::number_suffixes},
  };
  for (const auto& [text, vocabulary] : lists) split_into(text, w.*vocabulary);
  for (std::string_view p : kAccentedPhrases) w.accented_phrases.push_back(p);
  for (std::string_view e : kEmoticons) w.emoticons.push_back(e);
  // The plural strings must outlive the views; a deque never moves its elements.
  static std::deque<std::string> plural_storage;
  for (std::string_view n : w.nouns) {
    plural_storage.push_back(plural_of(n));
    w.plural_nouns.push_back(plural_storage.back());
  }
  return w;
}

}  // namespace

const TweetWords& tweet_words() {
  static const TweetWords words = build_words();
  return words;
}

}  // namespace infercost::corpus::internal
