package reporting

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestCustomerIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x := newCustomerIndex(0) // grows from its smallest size
	want := map[customerHash]int32{}
	var keys []customerHash
	for i := range 20000 {
		var k customerHash
		if i%3 == 0 && len(keys) > 0 {
			k = keys[r.IntN(len(keys))] // a key seen before
		} else {
			for j := range k {
				k[j] = byte(r.UintN(256))
			}
			k[0] &= 0x0f // many keys share a slot's first bits
		}
		pos, ok := x.find(k, int32(len(want)))
		if p, seen := want[k]; seen != ok || (seen && p != pos) {
			t.Fatalf("key %x: got %d, %v; want %d, %v", k, pos, ok, p, seen)
		}
		if !ok {
			want[k] = pos
			keys = append(keys, k)
		}
	}
	var absent customerHash
	absent[9] = 1
	if _, ok := x.find(absent, -1); ok {
		t.Fatal("found an absent key")
	}
	if _, ok := x.find(absent, -1); ok {
		t.Fatal("a lookup added the key")
	}
}

func TestTopTotals(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for round := range 200 {
		var top, other topTotals // two parts of the customers, merged
		var all []int64
		for i := range r.IntN(40) {
			v := int64(r.IntN(20)) - 3 // ties, zeros and negatives, which do not count
			if i%2 == 0 {
				top.add(v)
			} else {
				other.add(v)
			}
			if v > 0 {
				all = append(all, v)
			}
		}
		top.merge(&other)
		slices.SortFunc(all, func(a, b int64) int { return cmp.Compare(b, a) })
		var sum int64
		for _, v := range all {
			sum += v
		}
		if top.sum != sum || !slices.Equal(top.top, all[:min(concentrationN, len(all))]) {
			t.Fatalf("round %d: %+v, want sum %d, top %v", round, top, sum, all[:min(concentrationN, len(all))])
		}
	}
}

func TestParseInstants(t *testing.T) {
	if got := parseInstants("", nil); len(got) != 0 {
		t.Errorf("empty: %v", got)
	}
	if got := parseInstants("7,1700000000,4294967295", []uint32{1}); !slices.Equal(got, []uint32{1, 7, 1700000000, 4294967295}) {
		t.Errorf("got %v", got)
	}
}
