package partnerfake

import (
	"fmt"
	"strings"
)

// The part of the Partner API schema the fake serves, written as SDL so it can be compared with
// the public reference field by field. Types the fake never returns (themes, services, referrals,
// tax) are declared so that client queries naming them in fragments validate as they would on the
// real API. Experts-marketplace queries (jobs, conversations; unsupported since 2024-01), the
// mutations and the 2026 `events` / `activeSubscription` queries are not declared.
const schemaSDL = `
scalar DateTime
scalar Decimal
scalar Url

type QueryRoot {
  app(id: ID!): App
  publicApiVersions: [ApiVersion!]!
  transaction(id: ID!): Transaction
  transactions(after: String, before: String, first: Int, last: Int, shopId: ID, myshopifyDomain: String,
    appId: ID, createdAtMin: DateTime, createdAtMax: DateTime, types: [TransactionType!]): TransactionConnection!
}

type ApiVersion { displayName: String! handle: String! supported: Boolean! }

interface Node { id: ID! }
interface Actor { avatarUrl: Url id: ID! name: String! }

type App implements Node {
  apiKey: String!
  events(after: String, before: String, first: Int, last: Int, types: [AppEventTypes!], shopId: ID,
    chargeId: ID, occurredAtMin: DateTime, occurredAtMax: DateTime): AppEventConnection!
  id: ID!
  name: String!
}

type Shop implements Node & Actor { avatarUrl: Url id: ID! myshopifyDomain: Url! name: String! }
type Theme implements Node { id: ID! name: String! }
type Money { amount: Decimal! currencyCode: Currency! }
type PageInfo { hasNextPage: Boolean! hasPreviousPage: Boolean! }

interface Transaction { createdAt: DateTime! id: ID! }
type TransactionConnection { edges: [TransactionEdge!]! pageInfo: PageInfo! }
type TransactionEdge { cursor: String! node: Transaction! }

type AppSubscriptionSale implements Node & Transaction {
  app: App! billingInterval: AppPricingInterval chargeId: ID createdAt: DateTime! grossAmount: Money id: ID!
  netAmount: Money! shop: Shop shopifyFee: Money
}
type AppUsageSale implements Node & Transaction {
  app: App! chargeId: ID createdAt: DateTime! grossAmount: Money id: ID! netAmount: Money! shop: Shop shopifyFee: Money
}
type AppOneTimeSale implements Node & Transaction {
  app: App! chargeId: ID createdAt: DateTime! grossAmount: Money id: ID! netAmount: Money! shop: Shop shopifyFee: Money
}
type AppSaleAdjustment implements Node & Transaction {
  app: App! chargeId: ID createdAt: DateTime! grossAmount: Money id: ID! netAmount: Money! shop: Shop shopifyFee: Money
}
type AppSaleCredit implements Node & Transaction {
  app: App! chargeId: ID createdAt: DateTime! grossAmount: Money id: ID! netAmount: Money! shop: Shop shopifyFee: Money
}
type ServiceSale implements Node & Transaction {
  createdAt: DateTime! grossAmount: Money id: ID! netAmount: Money! shop: Shop shopifyFee: Money
}
type ServiceSaleAdjustment implements Node & Transaction {
  createdAt: DateTime! grossAmount: Money id: ID! netAmount: Money! shop: Shop shopifyFee: Money
}
type ThemeSale implements Node & Transaction {
  createdAt: DateTime! grossAmount: Money id: ID! netAmount: Money! shop: Shop shopifyFee: Money theme: Theme!
}
type ThemeSaleAdjustment implements Node & Transaction {
  createdAt: DateTime! grossAmount: Money id: ID! netAmount: Money! shop: Shop shopifyFee: Money theme: Theme!
}
type ReferralTransaction implements Node & Transaction {
  amount: Money! category: ReferralCategory! createdAt: DateTime! id: ID! shop: Shop!
}
type ReferralAdjustment implements Node & Transaction {
  amount: Money! category: ReferralCategory! createdAt: DateTime! id: ID! shop: Shop
}
type TaxTransaction implements Node & Transaction { amount: Money! createdAt: DateTime! id: ID! }
type LegacyTransaction implements Node & Transaction { amount: Money! createdAt: DateTime! id: ID! }

enum ReferralCategory { AFFILIATE_STORES TRANSFERRED_STORES SHOPIFY_PLUS POINT_OF_SALE }
enum TransactionType {
  SERVICE_SALE SERVICE_SALE_ADJUSTMENT THEME_SALE THEME_SALE_ADJUSTMENT APP_ONE_TIME_SALE APP_SUBSCRIPTION_SALE
  APP_USAGE_SALE APP_SALE_CREDIT APP_SALE_ADJUSTMENT REFERRAL REFERRAL_ADJUSTMENT TAX LEGACY
}
enum AppPricingInterval { EVERY_30_DAYS ANNUAL }

interface AppCharge { amount: Money! id: ID! name: String! test: Boolean! }
type AppSubscription implements Node & AppCharge { amount: Money! billingOn: DateTime id: ID! name: String! test: Boolean! }
type AppPurchaseOneTime implements Node & AppCharge { amount: Money! id: ID! name: String! test: Boolean! }
type AppUsageRecord implements Node & AppCharge { amount: Money! id: ID! name: String! test: Boolean! }
type AppCredit implements Node & AppCharge { amount: Money! id: ID! name: String! test: Boolean! }

interface AppEvent { app: App! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }
interface AppSubscriptionEvent { charge: AppSubscription! }
interface AppPurchaseOneTimeEvent { charge: AppPurchaseOneTime! }
interface AppUsageRecordEvent { charge: AppUsageRecord! }
interface AppCreditEvent { appCredit: AppCredit! }
type AppEventConnection { edges: [AppEventEdge!]! pageInfo: PageInfo! }
type AppEventEdge { cursor: String! node: AppEvent! }

type RelationshipInstalled implements AppEvent { app: App! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }
type RelationshipReactivated implements AppEvent { app: App! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }
type RelationshipDeactivated implements AppEvent { app: App! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }
type RelationshipUninstalled implements AppEvent {
  app: App! description: String occurredAt: DateTime! reason: String shop: Shop! type: AppEventTypes!
}
type SubscriptionChargeAccepted implements AppEvent & AppSubscriptionEvent { app: App! charge: AppSubscription! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }
type SubscriptionChargeActivated implements AppEvent & AppSubscriptionEvent { app: App! charge: AppSubscription! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }
type SubscriptionChargeCanceled implements AppEvent & AppSubscriptionEvent { app: App! charge: AppSubscription! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }
type SubscriptionChargeDeclined implements AppEvent & AppSubscriptionEvent { app: App! charge: AppSubscription! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }
type SubscriptionChargeExpired implements AppEvent & AppSubscriptionEvent { app: App! charge: AppSubscription! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }
type SubscriptionChargeFrozen implements AppEvent & AppSubscriptionEvent { app: App! charge: AppSubscription! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }
type SubscriptionChargeUnfrozen implements AppEvent & AppSubscriptionEvent { app: App! charge: AppSubscription! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }
type SubscriptionCappedAmountUpdated implements AppEvent & AppSubscriptionEvent { app: App! charge: AppSubscription! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }
type SubscriptionApproachingCappedAmount implements AppEvent & AppSubscriptionEvent { app: App! charge: AppSubscription! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }
type OneTimeChargeAccepted implements AppEvent & AppPurchaseOneTimeEvent { app: App! charge: AppPurchaseOneTime! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }
type OneTimeChargeActivated implements AppEvent & AppPurchaseOneTimeEvent { app: App! charge: AppPurchaseOneTime! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }
type OneTimeChargeDeclined implements AppEvent & AppPurchaseOneTimeEvent { app: App! charge: AppPurchaseOneTime! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }
type OneTimeChargeExpired implements AppEvent & AppPurchaseOneTimeEvent { app: App! charge: AppPurchaseOneTime! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }
type UsageChargeApplied implements AppEvent & AppUsageRecordEvent { app: App! charge: AppUsageRecord! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }
type CreditApplied implements AppEvent & AppCreditEvent { app: App! appCredit: AppCredit! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }
type CreditFailed implements AppEvent & AppCreditEvent { app: App! appCredit: AppCredit! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }
type CreditPending implements AppEvent & AppCreditEvent { app: App! appCredit: AppCredit! occurredAt: DateTime! shop: Shop! type: AppEventTypes! }

enum AppEventTypes {
  RELATIONSHIP_INSTALLED RELATIONSHIP_UNINSTALLED RELATIONSHIP_REACTIVATED RELATIONSHIP_DEACTIVATED
  ONE_TIME_CHARGE_ACCEPTED ONE_TIME_CHARGE_ACTIVATED ONE_TIME_CHARGE_DECLINED ONE_TIME_CHARGE_EXPIRED
  SUBSCRIPTION_CHARGE_ACCEPTED SUBSCRIPTION_CHARGE_ACTIVATED SUBSCRIPTION_CHARGE_CANCELED SUBSCRIPTION_CHARGE_DECLINED
  SUBSCRIPTION_CHARGE_EXPIRED SUBSCRIPTION_CHARGE_FROZEN SUBSCRIPTION_CHARGE_UNFROZEN
  SUBSCRIPTION_CAPPED_AMOUNT_UPDATED SUBSCRIPTION_APPROACHING_CAPPED_AMOUNT
  CREDIT_APPLIED CREDIT_FAILED CREDIT_PENDING USAGE_CHARGE_APPLIED
}

enum Currency {
  AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF
  CHF CLP CNY COP CRC CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL
  HRK HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD
  MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG
  QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLL SOS SRD SSP STN SYP SZL THB TJS TMT TND TOP TRY TTD TWD
  TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XCD XOF XPF YER ZAR ZMW
}
`

// unstableSDL adds what the unstable version has on top of the dated versions: the processing and
// regulatory-operating fees on sale transactions (2021 changelog; absent from stable docs).
const unstableSDL = `
extend type AppSubscriptionSale { processingFee: Money regulatoryOperatingFee: Money }
extend type AppUsageSale { processingFee: Money regulatoryOperatingFee: Money }
extend type AppOneTimeSale { processingFee: Money regulatoryOperatingFee: Money }
extend type AppSaleAdjustment { processingFee: Money regulatoryOperatingFee: Money }
extend type AppSaleCredit { processingFee: Money regulatoryOperatingFee: Money }
extend type ServiceSale { processingFee: Money regulatoryOperatingFee: Money }
extend type ServiceSaleAdjustment { processingFee: Money regulatoryOperatingFee: Money }
extend type ThemeSale { processingFee: Money regulatoryOperatingFee: Money }
extend type ThemeSaleAdjustment { processingFee: Money regulatoryOperatingFee: Money }
`

type typeKind uint8

const (
	kScalar typeKind = iota
	kEnum
	kObject
	kInterface
)

type typeDef struct {
	name     string
	kind     typeKind
	fields   map[string]*fieldDef
	ifaces   []string
	enum     map[string]bool
	possible map[string]bool // concrete object types (itself for an object)
}

type fieldDef struct {
	name     string
	typ      *typeRef
	args     map[string]*argDef
	argOrder []string
}

type argDef struct {
	name string
	typ  *typeRef
	def  *value
}

type schema struct {
	types map[string]*typeDef
	query *typeDef
}

var (
	stableSchema   = mustSchema(schemaSDL)
	unstableSchema = mustSchema(schemaSDL + unstableSDL)
)

func mustSchema(sdl string) *schema {
	s, err := parseSchema(sdl)
	if err != nil {
		panic(err)
	}
	return s
}

// parseSchema reads the SDL subset above: scalar, enum, interface, type (with implements), extend
// type, fields with arguments and defaults.
func parseSchema(sdl string) (*schema, error) {
	toks, lerr := lex(sdl)
	if lerr != nil {
		return nil, fmt.Errorf("schema: %s", lerr.Message)
	}
	p := &parser{toks: toks}
	s := &schema{types: map[string]*typeDef{}}
	for _, b := range []string{"ID", "String", "Int", "Float", "Boolean"} {
		s.types[b] = &typeDef{name: b, kind: kScalar}
	}
	for p.err == nil && p.peek().kind != tEOF {
		kw := p.expectName()
		extend := kw == "extend"
		if extend {
			kw = p.expectName()
		}
		name := p.expectName()
		t := s.types[name]
		if t == nil {
			t = &typeDef{name: name, fields: map[string]*fieldDef{}}
			s.types[name] = t
		}
		switch kw {
		case "scalar":
			t.kind = kScalar
		case "enum":
			t.kind, t.enum = kEnum, map[string]bool{}
			p.expectPunct("{")
			for p.err == nil && !p.skipPunct("}") {
				t.enum[p.expectName()] = true
			}
		case "type", "interface":
			if !extend {
				t.kind = kObject
				if kw == "interface" {
					t.kind = kInterface
				}
			}
			if p.peek().kind == tName && p.peek().val == "implements" {
				p.next()
				for {
					p.skipPunct("&")
					t.ifaces = append(t.ifaces, p.expectName())
					if !p.isPunct("&") {
						break
					}
				}
			}
			p.expectPunct("{")
			for p.err == nil && !p.skipPunct("}") {
				f := &fieldDef{name: p.expectName(), args: map[string]*argDef{}}
				if p.skipPunct("(") {
					for p.err == nil && !p.skipPunct(")") {
						a := &argDef{name: p.expectName()}
						p.expectPunct(":")
						a.typ = p.typeRef()
						if p.skipPunct("=") {
							a.def = p.value(true)
						}
						f.args[a.name] = a
						f.argOrder = append(f.argOrder, a.name)
					}
				}
				p.expectPunct(":")
				f.typ = p.typeRef()
				t.fields[f.name] = f
			}
		default:
			return nil, fmt.Errorf("schema: unexpected %q", kw)
		}
	}
	if p.err != nil {
		return nil, fmt.Errorf("schema: %s", p.err.Message)
	}
	for _, t := range s.types {
		switch t.kind {
		case kObject:
			t.possible = map[string]bool{t.name: true}
			for _, i := range t.ifaces {
				it := s.types[i]
				if it == nil || it.kind != kInterface {
					return nil, fmt.Errorf("schema: %s implements unknown interface %s", t.name, i)
				}
				if it.possible == nil {
					it.possible = map[string]bool{}
				}
				it.possible[t.name] = true
				for fn := range it.fields {
					if t.fields[fn] == nil {
						return nil, fmt.Errorf("schema: %s lacks %s.%s", t.name, i, fn)
					}
				}
			}
		case kInterface:
			if t.possible == nil {
				t.possible = map[string]bool{}
			}
		}
		for _, f := range t.fields {
			if s.types[f.typ.named()] == nil {
				return nil, fmt.Errorf("schema: %s.%s has unknown type %s", t.name, f.name, f.typ)
			}
		}
	}
	s.query = s.types["QueryRoot"]
	return s, nil
}

// isLeaf reports whether a named type is a scalar or enum.
func (s *schema) isLeaf(name string) bool {
	t := s.types[name]
	return t != nil && (t.kind == kScalar || t.kind == kEnum)
}

// overlaps reports whether a fragment on cond can apply inside parent.
func (s *schema) overlaps(cond, parent *typeDef) bool {
	for name := range cond.possible {
		if parent.possible[name] {
			return true
		}
	}
	return false
}

// typeName lists type names for messages: "String", "[Int!]!".
func describe(t *typeRef) string { return strings.TrimSpace(t.String()) }
