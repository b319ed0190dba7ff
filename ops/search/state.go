package search

import "weft/model"

// ItemID names the item at index in the view a search ran over, so a
// hit can be found again after the thread changes (a hit's index is
// only good for the version searched); "" when there is no such item.
func (st *FuzzyState) ItemID(index int) model.ItemID {
	if st == nil || st.view == nil || index < 0 || index >= st.view.Len() {
		return ""
	}
	return st.view.ID(st.view.Items[index])
}
